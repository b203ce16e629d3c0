"""One widget per module; widgets only paint what the model computed."""
