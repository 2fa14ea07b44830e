"""UloRL (docs/methods/ulorl.md): segment rollout across optimizer steps, pseudo on-policy importance
sampling (POIS) and dynamic masking of well-mastered positive tokens (DMMPT). `method.py` runs a step,
`options.py` declares its settings."""
