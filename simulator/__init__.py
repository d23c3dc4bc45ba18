"""The provider simulator: profiles, world, fault plans, delivery and the provider API.

Import from the subpackages (`simulator.profiles`, `simulator.world`, `simulator.faults`,
`simulator.delivery`, `simulator.server`); this package re-exports the errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.simulator.lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "DeliveryError": "hookproof.simulator.errors",
    "FaultPlanError": "hookproof.simulator.errors",
    "ProfileError": "hookproof.simulator.errors",
    "SecretError": "hookproof.simulator.errors",
    "SimulatorError": "hookproof.simulator.errors",
    "TargetError": "hookproof.simulator.errors",
    "WorldError": "hookproof.simulator.errors",
}


if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
