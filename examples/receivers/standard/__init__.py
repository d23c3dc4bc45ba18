"""Standard Webhooks receivers written for a sender of their own naming (`billing_names`)."""
