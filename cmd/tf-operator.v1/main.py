"""Launcher for the operator binary, where v0.5.3 kept ``cmd/tf-operator.v1/main.go``.

The real entry point is the ``tf-operator`` console script (``tf_operator.app.main:main``);
this file only lets ``python cmd/tf-operator.v1/main.py --flags`` run the same thing.
"""

from tf_operator.app.main import main

if __name__ == "__main__":
    main()
