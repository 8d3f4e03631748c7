"""``python -m nitpicker.cli``."""

from nitpicker.cli import main

main()
