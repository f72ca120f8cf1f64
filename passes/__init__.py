"""linear_layouts.passes"""
