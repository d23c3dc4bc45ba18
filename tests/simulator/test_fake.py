"""A world's fake data depends on its seed alone, though worlds share one Faker per locale."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from hookproof.simulator.world import World


def people(seed: int, locales: tuple[str, ...] = ("en_US", "pt_BR", "en_US")) -> list[tuple[str, str, str]]:
    world = World(seed, start_us=1_767_225_600_000_000)
    out = []
    for locale in locales:
        world.create_customer(locale=locale)
        customer = world.get(world.objects("customer")[-1])
        out.append((customer["name"], customer["email"], customer["address"]["city"]))
    return out


def test_interleaved_worlds_draw_what_their_seeds_say() -> None:
    alone = people(11)
    first = World(11, start_us=1_767_225_600_000_000)
    other = World(12, start_us=1_767_225_600_000_000)
    interleaved = []
    for locale in ("en_US", "pt_BR", "en_US"):
        other.create_customer(locale=locale)  # draws from the same shared Faker in between
        first.create_customer(locale=locale)
        customer = first.get(first.objects("customer")[-1])
        interleaved.append((customer["name"], customer["email"], customer["address"]["city"]))
    assert interleaved == alone
    assert people(12) != alone


def test_worlds_in_threads_draw_what_their_seeds_say() -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(people, [21, 22, 21, 22] * 3))
    assert all(r == results[0] for r in results[0::2]) and all(r == results[1] for r in results[1::2])
    assert results[0] != results[1]


def test_remembered_draws_are_fakers_own() -> None:
    """A burst seen before answers from memory; one that departs from it after a remembered
    call (another method, other arguments) still gets what Faker itself draws there."""
    from faker import Faker

    from hookproof.simulator.world.fake import FakeData

    def fakers(seed: int, calls: list[tuple[str, tuple[object, ...]]], locale: str = "en_US") -> list[object]:
        fk = Faker(locale)
        fk.seed_instance(seed * 7919 + 1)
        return [getattr(fk, name)(*args) for name, args in calls]

    def ours(seed: int, calls: list[tuple[str, tuple[object, ...]]], locale: str = "en_US") -> list[object]:
        with FakeData(seed)(locale) as fk:
            return [getattr(fk, name)(*args) for name, args in calls]

    customer = [("name", ()), ("email", ()), ("street_address", ()), ("city", ()), ("postcode", ())]
    departing = [("name", ()), ("email", ()), ("numerify", ("####",)), ("city", ())]
    for _ in range(2):  # the second round answers from memory where it can
        for seed in (31, 32):
            assert ours(seed, customer) == fakers(seed, customer)
            assert ours(seed, departing) == fakers(seed, departing)
            assert ours(seed, customer, "pt_BR") == fakers(seed, customer, "pt_BR")
