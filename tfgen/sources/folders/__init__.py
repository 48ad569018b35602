"""What the two folder sources (`image_folder`, `text_folder`) share: not a source of its own (not
registered), their static rules (rules.py) and their deep check (deep.py)."""
