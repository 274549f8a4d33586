"""The machine a run happens on: identity, checks (doctor)."""
