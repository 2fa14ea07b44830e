"""The cold start: supervised fine-tuning on demonstrations of a method's roles before self-play.

The papers start from 7B models that already write SPELL's JSON and the R1 format; a 135M model does
not, so its loops never turn. `cold_start:` in a training config (off unless set; off in the paper
configs) makes `harness train` first build demonstrations of every role from data the harness ships
(the method's `demonstrations`), drop any that overlap an evaluation set (`contamination.py`), and train
on them with TRL's `SFTTrainer` (`sft.py`). The result is saved as its own checkpoint, OUT/cold-start/,
from which the self-play run starts.
"""

from trainers.coldstart.demos import Demonstration
from trainers.coldstart.options import ColdStartOptions

__all__ = ["ColdStartOptions", "Demonstration"]
