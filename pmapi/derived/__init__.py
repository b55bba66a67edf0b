"""Derived metrics: new metrics defined on the client side by expressions over others.

ast.py holds the expression trees, parse.py reads expressions (pmRegisterDerived's
language: lexer.py's tokens, lalr.py's bison tables, ere.py's regcomp checks) and
unparse.py prints them back, registry.py keeps the global definitions and reads
pmLoadDerivedConfig files (by default PCP's, else the set in defaults/), bind.py checks
an expression against a context's metadata, context.py puts the definitions in one
context's namespace, and evaluate.py computes values from the operands' fetched values.
"""
