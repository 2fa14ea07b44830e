"""The TRL integration: how a `Method` (the package above) is trained on Hugging Face TRL.

`trainer` (TRL's `GRPOTrainer` with the method's batch), `engines` (generation from the trainer's
weights), `run` (`harness train`: dataset, method, trainer, resume), `callbacks`, `checkpoints`, `sft`
(cold-start SFT on TRL's `SFTTrainer`), `launch`, `memory`, `preflight` and `quiet`. Methods never
import from here.
"""
