"""Published numbers of the seed papers (paper/*.csv), shipped with the package."""
