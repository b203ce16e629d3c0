"""The screens of the viewer: one trace, a rank set, loading, help, health and errors."""
