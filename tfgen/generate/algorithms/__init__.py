"""Planning each `algorithm:` (one module an algorithm): what its step adds to the script."""
