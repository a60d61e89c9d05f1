"""The TFJob dashboard (console script ``tf-operator-dashboard``; needs the ``dashboard`` extra)."""
