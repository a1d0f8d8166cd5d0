"""The six Story tools and what they share (context, model config, structured calls, bounds).

A host imports them from the library entry, ``from story import PovPrepareTurnTool, ...``; this
package re-exports nothing, so importing one tool module never drags in the others.
"""
