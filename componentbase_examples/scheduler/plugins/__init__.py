"""The default scheduler plugins, one module each, and what they share (args types, helpers).

The list of defaults and a plugin manager holding them are in ``scheduler.registry``, above both these
modules and the framework they import; so a module of this package, such as the args types config
defaulting needs (``args``), is imported without the others.
"""
