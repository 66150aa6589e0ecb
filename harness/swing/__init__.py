"""The golf-swing pipeline: capture → IK → dynamic fit → candidate → replay → report."""
