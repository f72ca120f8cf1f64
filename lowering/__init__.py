"""linear_layouts.lowering"""
