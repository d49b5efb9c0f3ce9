"""The study: what an experiment is and the registry of them, profiles and overrides, the plan of units, running
them into a run folder (resumable), the environment recorded with them, and the notebooks that drive it all."""
