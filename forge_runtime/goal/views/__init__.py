"""What a person, the model or the status line is shown of a goal: status, the gauge, the
forecast, the reports, the checkpoint and the wrap-up turn's words."""
