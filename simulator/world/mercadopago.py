"""The Mercado Pago payments world: a Brazilian shop's payments and merchant orders.

`MercadoPagoWorld(seed)` holds payments (numeric ids, ``GET /v1/payments/{id}``'s shape)
and merchant orders (``GET /merchant_orders/{id}``'s shape), and emits the notifications
Mercado Pago sends about them (Mercado Pago developers, "Notifications" / "Webhooks":
topic ``payment`` with ``action`` ``payment.created`` on creation and
``payment.updated`` on every later change; a merchant order's notification, type
``topic_merchant_order_wh``, whenever an order is opened or changes: event ``merchant_order``). Refunds and chargebacks are changes of their payment, so they arrive as
``payment.updated`` about the payment's own id; the refund itself is in the payment's
``refunds`` list (API reference, "Get payment": ``refunds``, ``transaction_amount_refunded``).

Statuses and ``status_detail`` ("Get payment status",
mercadopago.com.br/developers/en/docs/checkout-api/response-handling/query-results): a card
payment is created ``approved``/``accredited`` or ``rejected``/``cc_rejected_insufficient_amount``,
or ``in_process``/``pending_contingency`` (approved or rejected later), or ``authorized``/
``pending_capture`` (approved when captured, ``cancelled``/``by_collector`` when not); a Pix
payment is created ``pending``/``pending_waiting_transfer`` and becomes ``approved``, or
``cancelled``/``expired`` unpaid; a partial refund keeps ``approved`` with
``partially_refunded``; a full refund is ``refunded``/``refunded``; a chargeback is
``charged_back``/``settled`` (money retained), or a disputed one ``charged_back``/``in_process``
first, then ``settled`` or ``reimbursed``.

``Event.type`` is the notification's ``action`` (``payment.created``,
``payment.updated``) or the topic (``merchant_order``); ``Event.account`` is the seller's
user id (digits, the notification's ``user_id`` and the payment's ``collector_id``).

Business keys (what a shop does once): ``license:{payment id}`` when a payment becomes
approved, ``refund:{payment id}:{refund id}`` per refund (both with their amount in
centavos, ``Event.amount``), ``chargeback:{payment id}`` per chargeback. Payments are stateful (their ``status``); merchant orders are not.
A receiver of these thin notifications fetches the payment, so it can derive every key
from the payment it reads: approved (or later refunded or charged back) means a
license, each entry of ``refunds`` a refund, ``charged_back`` a chargeback.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.world.records import RecordWorld

#: Every event type the world emits, in catalog order.
MERCADOPAGO_EVENT_TYPES: tuple[str, ...] = ("payment.created", "payment.updated", "merchant_order")

#: payment status -> statuses it may move to (Mercado Pago's payment statuses; a disputed
#: chargeback, ``charged_back``/``in_process``, is settled or reimbursed: `settle_dispute`).
PAYMENT_TRANSITIONS: Mapping[str, frozenset[str]] = {
    "pending": frozenset({"approved", "rejected", "cancelled"}),
    "in_process": frozenset({"approved", "rejected"}),
    "authorized": frozenset({"approved", "cancelled"}),
    "approved": frozenset({"approved", "refunded", "charged_back"}),
    "rejected": frozenset(),
    "cancelled": frozenset(),
    "refunded": frozenset({"charged_back"}),
    "charged_back": frozenset({"charged_back"}),
}

#: Brazil's offset, as Mercado Pago renders dates for a Brazilian seller (``-03:00``).
_BRT = timezone(timedelta(hours=-3))
_ITEMS = ("Camiseta básica", "Caneca de cerâmica", "Assinatura anual", "Curso online", "Fone de ouvido")


def mp_date(at_us: int) -> str:
    """``2024-01-10T10:10:10.123-03:00``: milliseconds and the seller's offset, as the API renders dates."""
    moment = datetime.fromtimestamp(at_us / 1_000_000, tz=_BRT)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{(at_us // 1000) % 1000:03d}-03:00"


class MercadoPagoWorld(RecordWorld):
    """A seller's Mercado Pago account, deterministic from `seed` (see the module docstring).

    `account` is the seller's user id as digits (default: drawn from the seed); `api_version`
    is accepted for the engine's sake (the notifications are ``v1``). Operations raise WorldError for an unknown object or a transition Mercado Pago does
    not make.
    """

    provider = "mercadopago"

    def __init__(self, seed: int = 0, *, livemode: bool = False, account: str | None = None,
                 start_us: int | None = None, step_us: int = 400_000, api_version: str = "v1") -> None:
        super().__init__(seed, livemode=livemode, account=account, start_us=start_us, step_us=step_us,
                         api_version="v1")
        drawn = self._rng.randint(100_000_000, 999_999_999)  # drawn always: the ids do not depend on `account`
        self.user_id = int(account) if account and account.isdigit() else drawn
        self.account = str(self.user_id)
        self.application_id = self._rng.randint(1_000_000_000_000_000, 9_999_999_999_999_999)

    # ---- operations -----------------------------------------------------------------
    def open_order(self, amount_cents: int | None = None) -> str:
        """A Checkout Pro preference's merchant order, opened: emits ``merchant_order``. Returns its id."""
        at = self._tick()
        oid = str(self._rng.randint(10_000_000_000, 39_999_999_999))
        cents = amount_cents or self._rng.randrange(1_990, 49_990, 10)
        title = self._rng.choice(_ITEMS)
        self._create(oid, "merchant_order", {
            "id": int(oid), "status": "opened", "external_reference": f"pedido-{self._rng.randrange(10**6):06d}",
            "preference_id": f"{self.user_id}-{self._uuid()}", "payments": [], "shipments": [], "payouts": [],
            "collector": {"id": self.user_id, "email": "", "nickname": f"LOJA{self.user_id % 100000}"},
            "marketplace": "NONE", "notification_url": None, "date_created": mp_date(at), "last_updated": mp_date(at),
            "sponsor_id": None, "shipping_cost": 0, "total_amount": cents / 100, "site_id": "MLB", "paid_amount": 0,
            "refunded_amount": 0, "payer": None,
            "items": [{"id": f"SKU-{self._rng.randrange(10**5):05d}", "category_id": "others", "currency_id": "BRL",
                       "description": title, "picture_url": None, "title": title, "quantity": 1,
                       "unit_price": cents / 100}],
            "cancelled": False, "additional_info": "", "application_id": None, "is_test": not self.livemode,
            "order_status": "payment_required",
        })
        self._emit("merchant_order", oid)
        return oid

    def pay(self, order: str | None = None, *, method: str = "card", approve: bool = True,
            review: bool = False, capture: bool = True) -> str:
        """A payment of `order` (or a direct Checkout API payment): emits ``payment.created``.

        ``method="card"`` is created ``approved`` (or ``rejected`` when not `approve`;
        ``in_process``/``pending_contingency`` with `review`; ``authorized``/``pending_capture``
        without `capture`); ``method="pix"`` is created ``pending`` (see `approve_pending`,
        `expire`). Returns its id.
        """
        at = self._tick()
        pid = str(self._rng.randint(80_000_000_000, 99_999_999_999))
        cents = (int(round(self._typed(order, "merchant_order")["total_amount"] * 100)) if order
                 else self._rng.randrange(1_990, 49_990, 10))
        if method == "pix":
            status, detail = "pending", "pending_waiting_transfer"
        elif review:
            status, detail = "in_process", "pending_contingency"
        elif not capture:
            status, detail = "authorized", "pending_capture"
        elif approve:
            status, detail = "approved", "accredited"
        else:
            status, detail = "rejected", "cc_rejected_insufficient_amount"
        snapshot = self._payment(pid, cents, method, order, at)
        snapshot.update(self._status_fields(status, detail, at, cents), captured=status != "authorized")
        self._create(pid, "payment", snapshot)
        self._emit("payment.created", pid, key=f"license:{pid}" if status == "approved" else None,
                   amount=cents if status == "approved" else None)
        if order:
            self._follow_order(pid, order)
        return pid

    def approve_pending(self, payment: str) -> None:
        """The buyer paid the Pix, the card's review passed or its authorization was captured:
        ``pending``, ``in_process`` or ``authorized`` -> ``approved``, emits ``payment.updated``."""
        current = self._typed(payment, "payment")
        at = self._tick()
        self._transition(payment, "approved", {**self._status_fields("approved", "accredited", at,
                                                                     _cents(current["transaction_amount"])),
                                               "captured": True}, at)
        self._emit("payment.updated", payment, key=f"license:{payment}", amount=_cents(current["transaction_amount"]))
        self._follow_order(payment)

    def refund(self, payment: str, amount_cents: int | None = None) -> int:
        """Refund `amount_cents` (default: what is left): emits ``payment.updated``. Returns the refund id."""
        current = self._typed(payment, "payment")
        paid = _cents(current["transaction_amount"])
        refunded = _cents(current["transaction_amount_refunded"])
        amount = min(amount_cents or paid - refunded, paid - refunded)
        if amount <= 0:
            raise WorldError(f"payment {payment} has nothing left to refund", object_id=payment)
        at = self._tick()
        refund_id = self._rng.randint(1_000_000_000, 9_999_999_999)
        self.fresh_ids.append(str(refund_id))
        refund = {"id": refund_id, "payment_id": int(payment), "amount": amount / 100, "metadata": {},
                  "source": {"name": "Loja", "id": str(self.user_id), "type": "collector"},
                  "date_created": mp_date(at), "unique_sequence_number": None, "refund_mode": "standard",
                  "adjustment_amount": 0, "status": "approved", "reason": None, "labels": [],
                  "amount_refunded_to_payer": amount / 100, "partition_details": [], "external_refund_id": None}
        total = refunded + amount
        full = total >= paid
        self._transition(payment, "refunded" if full else "approved", {
            "refunds": [*current["refunds"], refund], "transaction_amount_refunded": total / 100,
            "status_detail": "refunded" if full else "partially_refunded", "date_last_updated": mp_date(at)}, at)
        self._emit("payment.updated", payment, key=f"refund:{payment}:{refund_id}", amount=amount)
        self._follow_order(payment)
        return refund_id

    def expire(self, payment: str) -> None:
        """A Pix never paid (``cancelled``/``expired``) or an authorization released uncaptured
        (``cancelled``/``by_collector``): emits ``payment.updated``, owing nothing."""
        detail = "expired" if self._typed(payment, "payment")["status"] == "pending" else "by_collector"
        at = self._tick()
        self._transition(payment, "cancelled", {"status_detail": detail, "date_last_updated": mp_date(at)}, at)
        self._emit("payment.updated", payment)
        self._follow_order(payment)

    def dispute(self, payment: str) -> None:
        """The payer disowned the card payment: ``charged_back``/``in_process`` (its chargeback
        effect, `settle_dispute` ends it), emits ``payment.updated``."""
        self._not_charged_back(payment)
        at = self._tick()
        self._transition(payment, "charged_back", {"status_detail": "in_process", "date_last_updated": mp_date(at)},
                         at)
        self._emit("payment.updated", payment, key=f"chargeback:{payment}")

    def settle_dispute(self, payment: str, *, won: bool = False) -> None:
        """A disputed chargeback ends: the money retained (``settled``) or, `won`, reimbursed to the
        seller (``reimbursed``); emits ``payment.updated`` with no new effect."""
        current = self._typed(payment, "payment")
        if (current["status"], current["status_detail"]) != ("charged_back", "in_process"):
            raise WorldError(f"payment {payment} has no chargeback in dispute", object_id=payment)
        at = self._tick()
        self._transition(payment, "charged_back", {"status_detail": "reimbursed" if won else "settled",
                                                    "date_last_updated": mp_date(at)}, at)
        self._emit("payment.updated", payment)

    def charge_back(self, payment: str) -> None:
        """The buyer's bank reversed the payment: ``charged_back``/``settled``, emits ``payment.updated``."""
        self._not_charged_back(payment)
        at = self._tick()
        self._transition(payment, "charged_back", {"status_detail": "settled", "date_last_updated": mp_date(at)}, at)
        self._emit("payment.updated", payment, key=f"chargeback:{payment}")

    # ---- stories ----------------------------------------------------------------------
    def lifecycle(self) -> list[Event]:
        """A shop's day: every event type and every payment status, in a legal order."""
        start = len(self.events)
        order = self.open_order()
        card = self.pay(order)
        pix = self.pay(method="pix")
        self.approve_pending(pix)
        self.refund(card, _cents(self.get(card)["transaction_amount"]) // 3)
        self.refund(card)
        self.pay(approve=False)
        self.charge_back(pix)
        self.approve_pending(self.pay(review=True))
        self.approve_pending(self.pay(capture=False))
        self.expire(self.pay(method="pix"))
        self.expire(self.pay(capture=False))
        disputed = self.pay()
        self.dispute(disputed)
        self.settle_dispute(disputed, won=True)
        return self.events[start:]

    def effect_story(self) -> list[Event]:
        """One event of each effectful kind: a card payment approved, a Pix approved later,
        a partial refund, a chargeback; and a card payment rejected (it owes nothing). The
        story's every event, effectful or not: the catalog sends those the receiver's keys
        make effectful, and those of the same types that owe nothing."""
        start = len(self.events)
        card = self.pay(self.open_order())
        pix = self.pay(method="pix")
        self.approve_pending(pix)
        self.refund(card, _cents(self.get(card)["transaction_amount"]) // 4)
        self.charge_back(pix)
        self.pay(approve=False)
        return self.events[start:]

    def state_story(self) -> list[Event]:
        """A Pix payment's life: pending, approved, partially refunded, refunded."""
        start = len(self.events)
        pix = self.pay(method="pix")
        self.approve_pending(pix)
        self.refund(pix, _cents(self.get(pix)["transaction_amount"]) // 2)
        self.refund(pix)
        return [e for e in self.events[start:] if e.object_id == pix]

    def distinct_story(self) -> list[Event]:
        """Several effects of one object: a payment approved, then refunded in two parts."""
        start = len(self.events)
        card = self.pay()
        cents = _cents(self.get(card)["transaction_amount"])
        self.refund(card, cents // 4)
        self.refund(card, cents // 4)
        return [e for e in self.events[start:] if e.business_key]

    def companion_objects(self, objects: set[str]) -> set[str]:
        """The merchant orders among whose payments any of `objects` (payment ids) is: the
        Checkout Pro order a payment paid, whose ``merchant_order`` notifications (opened,
        closed, updated) a seller receives beside the payment's (the catalog sends them with
        a story's effectful events, `scenarios.catalog.effect_events`)."""
        paid = {int(o) for o in objects if o.isdigit()}
        return {order for order in self.objects("merchant_order")
                if any(p["id"] in paid for p in self.get(order)["payments"])}

    def related_groups(self, count: int = 2) -> list[tuple[Event, ...]]:
        """`count` Pix payments paid at once; each one's ``payment.created`` (pending) and
        ``payment.updated`` (approved), which arrive together when the buyer pays right away
        (a receiver fetching the payment reads it approved for both: "Webhooks", topic
        ``payment``, mercadopago.com.br/developers/en/docs/your-integrations/notifications/webhooks)."""
        groups = []
        for _ in range(count):
            start = len(self.events)
            self.approve_pending(self.pay(method="pix"))
            groups.append(tuple(self.events[start:]))
        return groups

    def unknown_event(self) -> Event:
        """A ``subscription_preapproval`` notification (a shop without subscriptions handles
        no such thing): not recorded, no effect."""
        at = self._tick()
        return Event(id=str(self._rng.randint(10**10, 10**11 - 1)), type="subscription_preapproval",
                     created=at // 1_000_000, created_us=at, object_type="preapproval",
                     object_id=self._rng.randbytes(16).hex(), version=1, object={}, livemode=self.livemode,
                     account=self.account, api_version="v1", extra={"action": "updated"})

    def quiet_event(self) -> Event:
        """A stateless, effectless event (a merchant order opened), e.g. to oversize."""
        self.open_order()
        return self.events[-1]

    # ---- internals --------------------------------------------------------------------
    def _uuid(self) -> str:
        h = "%032x" % self._rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def _payment(self, pid: str, cents: int, method: str, order: str | None, at: int) -> dict[str, Any]:
        pix = method == "pix"
        title = self._typed(order, "merchant_order")["items"][0]["title"] if order else self._rng.choice(_ITEMS)
        payer_id = str(self._rng.randint(100_000_000, 2_999_999_999))
        return {
            "id": int(pid), "date_created": mp_date(at), "date_approved": None, "date_last_updated": mp_date(at),
            "date_of_expiration": mp_date(at + 86_400_000_000) if pix else None, "money_release_date": None,
            "money_release_status": "pending", "operation_type": "regular_payment",
            "issuer_id": None if pix else "25", "payment_method_id": "pix" if pix else "master",
            "payment_type_id": "bank_transfer" if pix else "credit_card",
            "payment_method": {"id": "pix" if pix else "master", "type": "bank_transfer" if pix else "credit_card",
                               "issuer_id": "12501" if pix else "25"},
            "status": "pending", "status_detail": "pending_waiting_transfer", "currency_id": "BRL",
            "description": title, "live_mode": self.livemode, "sponsor_id": None, "authorization_code": None,
            "money_release_schema": None, "taxes_amount": 0, "counter_currency": None, "brand_id": None,
            "shipping_amount": 0, "build_version": "3.81.0", "pos_id": None, "store_id": None, "integrator_id": None,
            "platform_id": None, "corporation_id": None, "collector_id": self.user_id,
            "payer": {"type": None, "id": payer_id, "operator_id": None, "email": f"comprador{payer_id[-5:]}@example.com",
                      "identification": {"type": "CPF", "number": f"{self._rng.randrange(10**11):011d}"},
                      "phone": {"area_code": None, "number": None, "extension": None},
                      "first_name": None, "last_name": None, "entity_type": None},
            "marketplace_owner": None, "metadata": {},
            "additional_info": {"items": [{"id": None, "title": title, "description": None, "picture_url": None,
                                           "category_id": None, "quantity": "1", "unit_price": str(cents / 100)}]},
            "order": {"id": order, "type": "mercadopago"} if order else {},
            "external_reference": self._typed(order, "merchant_order")["external_reference"] if order else None,
            "transaction_amount": cents / 100, "transaction_amount_refunded": 0, "coupon_amount": 0,
            "differential_pricing_id": None, "financing_group": None, "deduction_schema": None, "installments": 1,
            "transaction_details": {"payment_method_reference_id": None, "acquirer_reference": None,
                                    "net_received_amount": 0, "total_paid_amount": cents / 100,
                                    "overpaid_amount": 0, "external_resource_url": None,
                                    "installment_amount": cents / 100, "financial_institution": None,
                                    "payable_deferral_period": None},
            "fee_details": [], "charges_details": [], "captured": True, "binary_mode": False,
            "call_for_authorize_id": None, "statement_descriptor": None if pix else "LOJA",
            "card": {} if pix else {"id": None, "first_six_digits": "503143", "last_four_digits": "6351",
                                    "expiration_month": 11, "expiration_year": 2030,
                                    "date_created": mp_date(at), "date_last_updated": mp_date(at),
                                    "cardholder": {"name": "APRO", "identification": {"number": None, "type": None}}},
            "notification_url": None, "refunds": [], "processing_mode": "aggregator", "merchant_account_id": None,
            "merchant_number": None, "acquirer_reconciliation": [], "point_of_interaction": {"type": "UNSPECIFIED"},
            "accounts_info": None, "tags": None,
        }

    def _status_fields(self, status: str, detail: str, at: int, cents: int) -> dict[str, Any]:
        fields: dict[str, Any] = {"status": status, "status_detail": detail, "date_last_updated": mp_date(at)}
        if status == "approved":
            fee = round(cents * 0.0498)
            fields.update(date_approved=mp_date(at), money_release_date=mp_date(at + 14 * 86_400_000_000),
                          fee_details=[{"type": "mercadopago_fee", "amount": fee / 100, "fee_payer": "collector"}])
            fields["transaction_details"] = {"payment_method_reference_id": None, "acquirer_reference": None,
                                             "net_received_amount": (cents - fee) / 100,
                                             "total_paid_amount": cents / 100, "overpaid_amount": 0,
                                             "external_resource_url": None, "installment_amount": cents / 100,
                                             "financial_institution": None, "payable_deferral_period": None}
        return fields

    def _transition(self, payment: str, status: str, changes: Mapping[str, Any], at: int) -> None:
        old = self._typed(payment, "payment")["status"]
        if status not in PAYMENT_TRANSITIONS[old]:
            raise WorldError(f"payment {payment}: {old} -> {status} is not a transition Mercado Pago makes",
                             object_id=payment)
        self._update(payment, {**changes, "status": status})

    def _not_charged_back(self, payment: str) -> None:
        if self._typed(payment, "payment")["status"] == "charged_back":
            raise WorldError(f"payment {payment} is already charged back", object_id=payment)

    def _follow_order(self, payment: str, order: str | None = None) -> None:
        """Bring `payment`'s order (`order`, or the payment's own) up to date with it and emit
        the order's ``merchant_order`` notification; nothing for a payment without an order."""
        p = self._typed(payment, "payment")
        order = order or (p["order"].get("id") if p["order"] else None)
        if not order:
            return
        mo = self._typed(order, "merchant_order")
        entry = {"id": p["id"], "transaction_amount": p["transaction_amount"],
                 "total_paid_amount": p["transaction_details"]["total_paid_amount"], "shipping_cost": 0,
                 "currency_id": "BRL", "status": p["status"], "status_detail": p["status_detail"],
                 "operation_type": "regular_payment", "date_approved": p["date_approved"],
                 "date_created": p["date_created"], "last_modified": p["date_last_updated"],
                 "amount_refunded": p["transaction_amount_refunded"]}
        payments = [entry if x["id"] == p["id"] else x for x in mo["payments"]]
        if entry not in payments:
            payments.append(entry)
        paid = sum(x["transaction_amount"] for x in payments if x["status"] in ("approved", "refunded", "charged_back"))
        refunded = sum(x["amount_refunded"] for x in payments)
        closed = paid >= mo["total_amount"]
        self._update(order, {"payments": payments, "paid_amount": paid, "refunded_amount": refunded,
                             "status": "closed" if closed else "opened",
                             "order_status": ("reverted" if refunded >= mo["total_amount"] else "paid") if closed
                             else "payment_required", "last_updated": p["date_last_updated"]})
        self._emit("merchant_order", order)

    def _emit(self, event_type: str, object_id: str, *, key: str | None = None, amount: int | None = None) -> Event:
        rec = self._record(object_id)
        at = self._now_us + 1_000
        snapshot = self.get(object_id)
        stateful = rec.object_type == "payment"
        return self._record_event(Event(
            id=str(self._rng.randint(10**10, 10**11 - 1)), type=event_type, created=at // 1_000_000, created_us=at,
            object_type=rec.object_type, object_id=object_id, version=len(rec.versions), object=snapshot,
            business_key=key, amount=amount, currency="brl" if amount is not None else None,
            status=str(snapshot["status"]) if stateful else None, livemode=self.livemode, account=self.account,
            api_version="v1", extra={"action": event_type if stateful else None,
                                     "application_id": self.application_id}))


def _cents(amount: float | int) -> int:
    return int(round(float(amount) * 100))


#: Event type -> a story that makes a fresh world emit it (``hookproof send``).
MERCADOPAGO_SCRIPTS: Mapping[str, Callable[[MercadoPagoWorld], object]] = {
    "payment.created": lambda w: w.pay(),
    "payment.updated": lambda w: w.refund(w.pay()),
    "merchant_order": lambda w: w.open_order(),
}


def mercadopago_events_of_type(world: MercadoPagoWorld, event_type: str, count: int = 1) -> list[Event]:
    """Run the story for `event_type` `count` times; the emitted events of that type.

    Raises WorldError naming the known types for a type Mercado Pago does not send.
    """
    script = MERCADOPAGO_SCRIPTS.get(event_type)
    if script is None:
        raise WorldError(f"the Mercado Pago profile sends no event {event_type!r} (known: {', '.join(MERCADOPAGO_EVENT_TYPES)})")
    start = len(world.events)
    for _ in range(count):
        script(world)
    return [e for e in world.events[start:] if e.type == event_type]
