"""harness/track: marker IK and inverse dynamics of any OpenSim model, beside OpenSim's
own tools (docs/track.md)."""
