"""linear_layouts.tools"""
