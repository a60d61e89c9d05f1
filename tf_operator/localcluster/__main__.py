"""``python -m tf_operator.localcluster`` / ``tf-operator-localcluster``."""

from tf_operator.localcluster.cli import main

if __name__ == "__main__":
    main()
