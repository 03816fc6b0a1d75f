"""The main job: a whole small cluster of example components, scheduling and running a batch of pods."""
