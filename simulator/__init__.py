"""The provider simulator: profiles, world, fault plans, delivery and the provider API.

Import from the subpackages (`simulator.profiles`, `simulator.world`, `simulator.faults`,
`simulator.delivery`, `simulator.server`); this package re-exports the errors.
"""

from hookproof.simulator.errors import (
    DeliveryError,
    FaultPlanError,
    ProfileError,
    SecretError,
    SimulatorError,
    TargetError,
    WorldError,
)

__all__ = [
    "DeliveryError",
    "FaultPlanError",
    "ProfileError",
    "SecretError",
    "SimulatorError",
    "TargetError",
    "WorldError",
]
