"""Advice for layouts picked by hand (``layout_advice``) and the kernel with it applied
(``apply_advice``: the ``ll-apply-advice`` pass)."""
