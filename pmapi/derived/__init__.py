"""Derived metrics: new metrics defined on the client side by expressions over others.

ast.py holds the expression trees, parse.py reads expressions (pmRegisterDerived's
language), config.py reads pmLoadDerivedConfig files, registry.py keeps the global
definitions, bind.py checks an expression against a context's metadata, and
evaluate.py computes values from the operands' fetched values.
"""
