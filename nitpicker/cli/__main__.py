"""``python -m nitpicker.cli``."""

from nitpicker.cli import main

if __name__ == "__main__":  # not when a --workers process (spawned) imports it as __mp_main__
    main()
