"""The lowest layer: types, settings, files, models and the registry, which every other layer may use."""
