"""The provider simulator: profiles, world, fault plans, delivery and the provider API."""
