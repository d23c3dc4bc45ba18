"""The Paddle Billing world: a SaaS seller's customers, subscriptions, transactions and refunds.

The seller sells a plan monthly and yearly (prices with ``billing_cycle`` ``{"interval": "month"|"year",
"frequency": 1}``; a yearly period a calendar year) and a licence once (a price whose ``billing_cycle``
is null, bought in a transaction that creates no subscription: its ``subscription_id`` and
``billing_period`` null), every id drawn from the seed.

`PaddleWorld(seed)` emits the notifications Paddle Billing sends over a subscription's life
(developer.paddle.com, "Webhooks" / "Events": ``transaction.created|updated|ready|billed|paid|
completed|payment_failed|past_due``, ``subscription.created|trialing|activated|updated|past_due|
paused|resumed|canceled``, ``adjustment.created|updated``, ``customer.created|updated``,
``address.created``), each with the full entity as it is after the
change (``data``), in Paddle's shapes (`simulator.world.paddle_shapes`).
Ids are Paddle's: a prefix (``txn_``, ``sub_``, ``ctm_``, ``add_``, ``adj_``, ``pri_``,
``pro_``, ``txnitm_``, ``adjitm_``, ``paymtd_``, ``evt_``) and 26 lowercase Crockford
base32 characters starting ``01`` (a ULID).

Stories follow the event order of Paddle's webhook simulator scenarios
(developer.paddle.com/webhooks/simulator/subscription-created, -renewed, -paused, -resumed,
-canceled) and its events reference (…/webhooks/transactions/transaction-payment-failed,
…/transaction-past-due): a checkout's transaction is created ``draft``; a new customer's details
create the customer and its address (``customer.created``, ``address.created``, both ``active``),
and the transaction becomes ``ready`` with them, is paid, creates the subscription (``active``, or ``trialing`` for a price with
a trial) and is completed; a renewal moves the subscription's period, then creates its
transaction ``billed`` and pays and completes it, or its payment fails and the transaction and the
subscription become ``past_due``; paying it makes the subscription ``active`` again (a trial's
end moves the period with that status change, a trialing subscription billed nothing until then);
a pause makes it ``paused``, its items ``inactive`` (a trial's pause is scheduled, a
``subscription.updated`` with its ``scheduled_change``, and made at the trial's end, as a
cancellation at the period's end is); a canceled subscription's items keep their status; a resume
starts a new period, bills it, and
activates the subscription; a
refund is an ``adjustment`` created ``pending_approval``, then approved or rejected by Paddle
(``adjustment.created``, then ``adjustment.updated``: developer.paddle.com/webhooks/adjustments/
adjustment-updated; a transaction takes no other refund while one is pending). Every change of an entity's status is an ``.updated`` event
carrying it, followed by the status's own events (``transaction.paid``, ``subscription.paused``…)
of the same version, as the scenarios list them.

Business keys (what a SaaS does once): ``fulfil:{txn id}`` per completed transaction (a one-time
purchase's too),
``provision:{sub id}`` per created subscription, ``dunning:{sub id}:{billing period
start}`` per past-due period (a reminder e-mail), ``deprovision:{sub id}`` per canceled
subscription, ``refund:{adj id}`` per refund Paddle approved, on its ``adjustment.updated``
(the money goes back to the customer only then: developer.paddle.com/build/transactions/
create-transaction-adjustments; a refund pending approval owes nothing yet, a rejected one never
does). The other events carry their entity's state only
(a team maps its own effects to them, e.g. provisioning on ``subscription.activated``).
Subscriptions, transactions and adjustments are stateful (``status``; an adjustment's moves
``pending_approval`` -> ``approved`` | ``rejected``); customers and addresses carry a status too
(``active``; Paddle's ``archived`` is never reached here), so an observer may read theirs
(``[observer.states] customer``); every event carries its entity's
``status``, for an observer that reads them. A customer's details changed (`update_customer`)
is ``customer.updated`` (developer.paddle.com/webhooks/customers/customer-updated), no effect.
``Event.account`` is the seller id (digits; Paddle sends no account in a notification);
there is no test/live flag in a notification either.
"""

from __future__ import annotations

import calendar
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.world import paddle_shapes as ps
from hookproof.simulator.world.records import RecordWorld

#: Every event type the world emits, in catalog order.
PADDLE_EVENT_TYPES: tuple[str, ...] = (
    "transaction.created", "transaction.updated", "transaction.ready", "transaction.billed", "transaction.paid",
    "transaction.completed", "transaction.payment_failed", "transaction.past_due",
    "subscription.created", "subscription.trialing", "subscription.activated", "subscription.updated",
    "subscription.past_due", "subscription.paused", "subscription.resumed", "subscription.canceled",
    "adjustment.created", "adjustment.updated",
    "customer.created", "customer.updated", "address.created",
)

#: subscription status -> statuses it may move to (Paddle's subscription statuses).
SUBSCRIPTION_TRANSITIONS: Mapping[str, frozenset[str]] = {
    "trialing": frozenset({"trialing", "active", "past_due", "canceled", "paused"}),
    "active": frozenset({"active", "past_due", "canceled", "paused"}),
    "past_due": frozenset({"active", "past_due", "canceled"}),
    "paused": frozenset({"paused", "active", "canceled"}),
    "canceled": frozenset(),
}

_ULID32 = "0123456789abcdefghjkmnpqrstvwxyz"
_PLANS = (("Starter", 1200), ("Team", 3000), ("Business", 9900))
_MONTH_US = 30 * 86_400 * 1_000_000
#: A trial's length: 14 days (a price's ``trial_period``, developer.paddle.com/api-reference/prices).
_TRIAL_DAYS = 14
_TRIAL_US = _TRIAL_DAYS * 86_400 * 1_000_000
#: A new customer's e-mail, numbered in the world (Paddle refuses a second customer with one
#: e-mail, developer.paddle.com/errors/customers/customer_already_exists).
_EMAILS = ("sam", "jo", "lex", "kim", "alex", "max")
#: What a checkout's customer enters (developer.paddle.com/webhooks/simulator/subscription-created:
#: "When a customer enters their country and ZIP/postal code"): a New York ZIP, the seller's tax
#: rate's (`paddle_shapes.TAX_RATE`).
_COUNTRY, _POSTAL_CODE = "US", "10021"


class PaddleWorld(RecordWorld):
    """A Paddle Billing seller, deterministic from `seed` (see the module docstring).

    Operations raise WorldError for an unknown object or a transition Paddle does not make.
    """

    provider = "paddle"

    def __init__(self, seed: int = 0, *, livemode: bool = False, account: str | None = None,
                 start_us: int | None = None, step_us: int = 400_000, api_version: str = "1") -> None:
        super().__init__(seed, livemode=livemode, account=account, start_us=start_us, step_us=step_us,
                         api_version="1")
        self.seller_id = int(account) if account and account.isdigit() else self._rng.randint(10_000, 999_999)
        self.account = str(self.seller_id)
        name, amount = _PLANS[seed % len(_PLANS)]
        # the catalog made 90 days before, at a microsecond of its own (a pure function of the seed)
        created_us = self._now_us - 90 * 86_400_000_000 + (seed * 7_919 + 104_729) % 1_000_000
        created = ps.iso(created_us)
        self.product = ps.product(self.new_id("pro"), f"Acme {name}", f"The {name} plan of Acme's app",
                                  ps.iso_ms(created_us))
        self.price = ps.price(self.new_id("pri"), self.product["id"], f"Monthly ({name})", amount, "USD", created)
        #: The plan billed yearly, ten months' price (`subscribe(annual=True)`).
        self.annual_price = ps.price(self.new_id("pri"), self.product["id"], f"Yearly ({name})", amount * 10, "USD",
                                     created, cycle=ps.YEARLY)
        #: What a licence shop sells once: a product with a one-time price (`buy`).
        self.licence = ps.product(self.new_id("pro"), f"Acme {name} licence",
                                  f"A perpetual licence of Acme's {name} desktop app", ps.iso_ms(created_us))
        self.licence_price = ps.price(self.new_id("pri"), self.licence["id"], f"Perpetual licence ({name})",
                                      amount * 20, "USD", created, cycle=None)
        self.fresh_ids.clear()  # the products and their prices are every story's

    def new_id(self, prefix: str) -> str:
        """``{prefix}_01`` + 24 lowercase Crockford base32 characters from the seed (kept in
        `fresh_ids`)."""
        made = f"{prefix}_01" + "".join(self._rng.choice(_ULID32) for _ in range(24))
        self.fresh_ids.append(made)
        return made

    # ---- operations -----------------------------------------------------------------
    def buy(self, *, subscribe: bool = False, quantity: int = 1, trial: bool = False, annual: bool = False) -> str:
        """A checkout paid by card: without `subscribe` a one-time purchase of the licence
        (`licence_price`, ``billing_cycle`` null: the transaction's ``subscription_id`` and
        ``billing_period`` stay null, no subscription is created: developer.paddle.com/webhooks/
        subscriptions/subscription-created, "Paddle automatically creates subscriptions for
        recurring items"), with it the monthly plan, or with `annual` the yearly one; in the order of Paddle's "Subscription created" scenario
        (developer.paddle.com/webhooks/simulator/subscription-created) for a new customer:
        ``transaction.created`` (``draft``), the customer's details (``customer.created`` and
        ``address.created``, both ``active``, then ``transaction.updated`` with their ids and
        ``transaction.ready``), the
        payment (``transaction.updated``, ``transaction.paid``), with `subscribe` the subscription
        (``subscription.created``, then ``subscription.activated``, or with `trial`
        ``subscription.trialing``) and the transaction given its subscription
        (``transaction.updated``), then the invoice (``transaction.updated``,
        ``transaction.completed``). Returns the transaction id. Raises WorldError for `trial` or
        `annual` without `subscribe` (a one-time price has neither)."""
        if not subscribe and (trial or annual):
            raise WorldError("a one-time purchase has no trial and no billing cycle: trial and annual need subscribe")
        at = self._tick()
        customer, address = self.new_id("ctm"), self.new_id("add")
        txn_id = self.new_id("txn")
        plan = self.annual_price if annual else self.price
        period = (ps.iso(at), ps.iso(at + _TRIAL_US if trial else _cycle_end(at, plan["billing_cycle"]))) \
            if subscribe else None
        pri = (ps.with_trial(plan, _TRIAL_DAYS) if trial else plan) if subscribe else self.licence_price
        prod = self.product if subscribe else self.licence
        txn = ps.transaction(txn_id, customer_id=None, address_id=None, subscription_id=None, origin="web",
                             pri=pri, prod=prod, quantity=quantity, item_id=self.new_id("txnitm"),
                             created=ps.iso_ns(at), period=None, checkout_url=f"https://acme.example/pay?_ptxn={txn_id}",
                             charged=not trial)
        txn["status"] = "draft"
        self._create(txn_id, "transaction", txn)
        self._emit("transaction.created", txn_id)
        number = len(self.objects("customer"))
        email = f"{_EMAILS[number % len(_EMAILS)]}.{number + 1}@example.com"
        self._create(customer, "customer", ps.customer(customer, email=email, name=None, created=ps.iso_ms(self._tick())))
        self._emit("customer.created", customer)
        self._create(address, "address", ps.address(address, customer_id=customer, country_code=_COUNTRY,
                                                    postal_code=_POSTAL_CODE, created=ps.iso_ms(self._tick())))
        self._emit("address.created", address)
        self._txn_change(txn_id, {"customer_id": customer, "address_id": address, "status": "ready",
                                  "updated_at": ps.iso_ns(self._tick())}, "transaction.ready")
        self._pay(txn_id)
        if subscribe:
            assert period is not None
            sub_id = self.new_id("sub")
            created = ps.iso(self._tick())
            self._create(sub_id, "subscription", ps.subscription(
                sub_id, customer_id=customer, address_id=address, pri=pri, prod=prod,
                quantity=quantity, created=created, period=period, trial=trial))
            made = self._emit("subscription.created", sub_id, key=f"provision:{sub_id}",
                              data=ps.subscription_created(self.get(sub_id), txn_id))
            self._emit("subscription.trialing" if trial else "subscription.activated", sub_id, after_us=made.created_us)
            self._update(txn_id, {"subscription_id": sub_id, "billing_period": {"starts_at": period[0],
                                                                              "ends_at": period[1]},
                                  "details": ps.with_payouts(self.get(txn_id)["details"]),
                                  "updated_at": ps.iso_ns(self._tick())})
            self._emit("transaction.updated", txn_id)
        self._complete(txn_id)
        return txn_id

    def subscribe(self, quantity: int = 1, *, trial: bool = False, annual: bool = False) -> str:
        """`buy` with a subscription (with `trial`, ``trialing`` for 14 days, the checkout
        charging nothing; with `annual` the yearly plan, its periods a calendar year long);
        returns the subscription id."""
        txn = self.buy(subscribe=True, quantity=quantity, trial=trial, annual=annual)
        return str(self._typed(txn, "transaction")["subscription_id"])

    def renew(self, sub: str, *, pay: bool = True) -> str:
        """Bill the next period, in the order of Paddle's "Subscription renewed" scenario
        (developer.paddle.com/webhooks/simulator/subscription-renewed): the subscription's new
        period first (``subscription.updated``, its status unchanged), then its renewal transaction
        (``transaction.created`` and ``transaction.billed``, ``billed``), paid (``transaction.updated``,
        ``transaction.paid``) and completed (``transaction.updated``, ``transaction.completed``), or
        declined: the transaction's payment attempt failed and the transaction ``past_due``
        (``transaction.updated``, ``transaction.payment_failed``, ``transaction.past_due``:
        developer.paddle.com/webhooks/transactions/transaction-payment-failed), then the
        subscription ``past_due`` (``subscription.updated``, ``subscription.past_due``). A trial's
        renewal ends it: no period moved while it is ``trialing`` (its items ``trialing``, billed
        nothing: Paddle's ``subscription.trialing`` example, paddle-node-sdk's
        ``subscription-trialing.mock.ts``); once the transaction is completed the subscription is
        ``active`` with the new period, its items ``active``, ``first_billed_at`` set
        (``subscription.updated``, ``subscription.activated``: the "Subscription is activated" step
        of developer.paddle.com/webhooks/simulator/subscription-resumed), or, declined, ``past_due``
        with it. Returns the transaction id."""
        current = self._typed(sub, "subscription")
        if current["status"] not in ("active", "past_due", "trialing"):
            raise WorldError(f"subscription {sub} is {current['status']}, it does not renew", object_id=sub)
        start_us = _parse(current["current_billing_period"]["ends_at"])
        self._now_us = max(self._now_us, start_us)
        return self._bill(sub, start_us, pay=pay, trial_ends=current["status"] == "trialing")

    def recover(self, sub: str) -> str:
        """The customer pays the past-due renewal: the transaction is paid and completed, then
        the subscription ``active`` again (``subscription.updated``, as the "Subscription is
        activated" step of developer.paddle.com/webhooks/simulator/subscription-resumed; no
        ``subscription.activated`` here: the pages read list it for a checkout and a resume, not for a
        recovered renewal). Returns the transaction id."""
        if self._typed(sub, "subscription")["status"] != "past_due":
            raise WorldError(f"subscription {sub} is not past_due", object_id=sub)
        txn_id = next(t for t in reversed(self.objects("transaction"))
                      if self.get(t)["subscription_id"] == sub and self.get(t)["status"] == "past_due")
        self._pay(txn_id)
        self._complete(txn_id)
        self._transition(sub, "active", {"updated_at": ps.iso(self._tick())})
        self._emit("subscription.updated", sub)
        return txn_id

    def pause(self, sub: str) -> None:
        """Pause immediately, as Paddle's "Subscription paused" scenario lists it
        (developer.paddle.com/webhooks/simulator/subscription-paused): billing dates cleared and
        the status ``paused`` (``subscription.updated``), then ``subscription.paused``. A trialing
        subscription is paused at the end of its trial, never at once
        (developer.paddle.com/changelog/2024/pause-trialing-subscriptions: "Trialing subscriptions
        can only be paused at the end of the billing period"): first the scheduled change
        (``subscription.updated``, still ``trialing``, its ``scheduled_change`` ``{"action":
        "pause", "effective_at": <the trial's end>, "resume_at": null}``: that scenario's "Subscription
        is scheduled to pause" step), then, at the trial's end, the pause itself. Its items
        are ``inactive`` (no ``trial_dates``, their ``previously_billed_at`` kept), as in Paddle's
        ``subscription.paused`` example (paddle-node-sdk's ``subscription-paused.mock.ts``); its
        ``current_billing_period`` is kept: "Paddle retains the billing period against the
        subscription when you pause" (developer.paddle.com/changelog/2024/
        resume-subscription-billing-period-options; the example, older, shows it null), and a
        resume starts a new one (that page: ``on_resume`` "defaults to start_new_billing_period").
        Raises WorldError unless it is ``active`` or ``trialing`` (a past-due one's pause, which
        cancels its past-due transactions, is not modelled)."""
        current = self._typed(sub, "subscription")
        if current["status"] not in ("active", "trialing"):
            raise WorldError(f"subscription {sub} is {current['status']}: only an active or trialing one is paused "
                             "here", object_id=sub)
        if current["status"] == "trialing":
            self._schedule(sub, "pause")
        at = ps.iso_ns(self._tick())
        items = [{**i, "status": "inactive", "trial_dates": None, "next_billed_at": None, "updated_at": at}
                 for i in self._typed(sub, "subscription")["items"]]
        self._status_change(sub, "paused", {"paused_at": at, "updated_at": at, "next_billed_at": None,
                                            "items": items, "scheduled_change": None}, "subscription.paused",
                            key=None)

    def resume(self, sub: str) -> str:
        """Resume a paused subscription with a new billing period from now, in the order of
        Paddle's "Subscription resumed" scenario (developer.paddle.com/webhooks/simulator/
        subscription-resumed): its new period (``subscription.updated``, ``subscription.resumed``),
        the period's transaction billed, paid and completed (as `renew`), then "Subscription is
        activated" (``subscription.updated``, ``subscription.activated``). Returns the transaction id."""
        if self._typed(sub, "subscription")["status"] != "paused":
            raise WorldError(f"subscription {sub} is not paused", object_id=sub)
        return self._bill(sub, self._now_us + 1_000_000, pay=True, resumed=True)

    def update_customer(self, customer: str, *, name: str | None = None, email: str | None = None) -> None:
        """The customer's details changed (a name given, a new e-mail; "Update a customer",
        developer.paddle.com/api-reference/customers/update-customer): ``updated_at`` moved and
        ``customer.updated`` (developer.paddle.com/webhooks/customers/customer-updated, "Occurs
        when a customer is updated"), its status unchanged. Raises WorldError for no change."""
        current = self._typed(customer, "customer")
        changes: dict[str, Any] = {k: v for k, v in (("name", name), ("email", email)) if v is not None}
        if not changes or all(current[k] == v for k, v in changes.items()):
            raise WorldError(f"customer {customer}: no detail changed", object_id=customer)
        self._update(customer, {**changes, "updated_at": ps.iso(self._tick())})
        self._emit("customer.updated", customer)

    def customer_of(self, txn_id: str) -> str:
        """The id of the customer of transaction `txn_id` (None before its details: WorldError)."""
        found = self._typed(txn_id, "transaction")["customer_id"]
        if found is None:
            raise WorldError(f"transaction {txn_id} has no customer yet", object_id=txn_id)
        return str(found)

    def change_quantity(self, sub: str, quantity: int) -> None:
        """Change the seats of a subscription: emits ``subscription.updated``."""
        current = self._typed(sub, "subscription")
        at = ps.iso(self._tick())
        items = [{**i, "quantity": quantity, "updated_at": at} for i in current["items"]]
        self._transition(sub, current["status"], {"items": items, "updated_at": at})
        self._emit("subscription.updated", sub)

    def cancel(self, sub: str, *, at_period_end: bool = False) -> None:
        """Cancel immediately: ``subscription.updated`` (status ``canceled``, ``canceled_at``, no
        billing period or next billing, ``scheduled_change`` null), then ``subscription.canceled``
        (developer.paddle.com/webhooks/simulator/subscription-canceled, "Subscription cancels").
        With `at_period_end` (Paddle's default, ``effective_from`` ``next_billing_period``, and
        what a customer's cancel link does: developer.paddle.com/build/subscriptions/
        cancel-subscriptions) first that scenario's "Subscription is scheduled to cancel" step:
        ``subscription.updated``, its status kept, its ``scheduled_change`` ``{"action": "cancel",
        "effective_at": <the period's end>, "resume_at": null}``, then at the period's end the
        cancellation. Each item keeps its status (Paddle's ``subscription.canceled`` example,
        paddle-node-sdk's ``subscription-canceled.mock.ts``: items ``active``, their
        ``next_billed_at`` null, ``previously_billed_at`` kept). Raises WorldError for a
        subscription canceled already, or `at_period_end` on one neither ``active`` nor
        ``trialing`` (no billing period to end: cancel it at once) or already scheduled to change."""
        current = self._typed(sub, "subscription")
        if current["status"] == "canceled":
            raise WorldError(f"subscription {sub} is canceled already", object_id=sub)
        if at_period_end:
            if current["status"] not in ("active", "trialing") or current["scheduled_change"] is not None:
                raise WorldError(f"subscription {sub} is {current['status']}"
                                 f"{' with a scheduled change' if current['scheduled_change'] else ''}: "
                                 "it cannot be canceled at its period's end", object_id=sub)
            self._schedule(sub, "cancel")
        at = ps.iso_ns(self._tick())
        items = [{**i, "next_billed_at": None, "updated_at": at} for i in self._typed(sub, "subscription")["items"]]
        self._status_change(sub, "canceled", {"canceled_at": at, "updated_at": at, "next_billed_at": None,
                                              "current_billing_period": None, "items": items,
                                              "scheduled_change": None},
                            "subscription.canceled", key=f"deprovision:{sub}")

    def _schedule(self, sub: str, action: str) -> None:
        """A change scheduled for the end of `sub`'s billing period (a trial's pause, a
        cancellation at the period's end): ``subscription.updated``, its status kept, its
        ``scheduled_change`` ``{"action": action, "effective_at": <the period's end>,
        "resume_at": null}`` (developer.paddle.com/webhooks/simulator/subscription-canceled and
        -paused: "Paddle updates the scheduled_change object against the subscription"); then the
        clock moves to that end, where the caller makes the change."""
        current = self._typed(sub, "subscription")
        effective = current["current_billing_period"]["ends_at"]
        self._transition(sub, current["status"], {"scheduled_change": {"action": action, "effective_at": effective,
                                                                       "resume_at": None},
                                                  "updated_at": ps.iso(self._tick())})
        self._emit("subscription.updated", sub)
        self._now_us = max(self._now_us, _parse(effective))

    def refund(self, txn_id: str, amount: int | None = None, *, review: str | None = "approved") -> str:
        """A partial refund of a completed transaction (a quarter of it unless `amount`, minor units)
        as Paddle runs one: the adjustment is created ``pending_approval`` (``adjustment.created``;
        developer.paddle.com/build/transactions/create-transaction-adjustments: "created with the
        status of pending_approval, before moving to approved or rejected once reviewed"), then with
        `review` (``approved`` or ``rejected``) Paddle's review of it (`review_refund`); None leaves
        it pending. Returns the adjustment id.

        Raises WorldError for another `review`, a transaction not completed, or one with a refund still pending
        approval (Paddle's ``adjustment_pending_refund_request``: "unable to create further
        adjustments against this transaction as there is a pending refund request",
        developer.paddle.com/errors/adjustments/adjustment_pending_refund_request)."""
        if review not in (None, "approved", "rejected"):
            raise WorldError(f"a refund's review is approved or rejected, not {review!r}")
        txn = self._typed(txn_id, "transaction")
        if txn["status"] != "completed":
            raise WorldError(f"transaction {txn_id} is {txn['status']}, not completed", object_id=txn_id)
        pending = self.pending_refund(txn_id)
        if pending is not None:
            raise WorldError(f"transaction {txn_id} has a refund pending approval ({pending}): Paddle refuses "
                             "another adjustment until it is approved or rejected", object_id=txn_id)
        total = int(txn["details"]["totals"]["grand_total"])
        adj_id = self.new_id("adj")
        self._create(adj_id, "adjustment", ps.adjustment(adj_id, self.new_id("adjitm"), txn=txn,
                                                         amount=amount or total // 4, created=ps.iso(self._tick())))
        self._emit("adjustment.created", adj_id)
        if review is not None:
            self.review_refund(adj_id, approve=review == "approved")
        return adj_id

    def review_refund(self, adj_id: str, *, approve: bool = True) -> None:
        """Paddle's review of a refund pending approval: its status ``approved`` (its business key
        ``refund:{adj id}``, its amount the refund's total) or ``rejected`` (no effect owed), its
        ``updated_at`` moved, and ``adjustment.updated`` (developer.paddle.com/webhooks/adjustments/
        adjustment-updated: "On review, they move to approved or rejected and adjustment.updated
        occurs"). Raises WorldError for an adjustment not pending approval."""
        adj = self._typed(adj_id, "adjustment")
        if adj["status"] != "pending_approval":
            raise WorldError(f"adjustment {adj_id} is {adj['status']}, not pending_approval", object_id=adj_id)
        status = "approved" if approve else "rejected"
        self._update(adj_id, {"status": status, "updated_at": ps.iso(self._tick())})
        self._emit("adjustment.updated", adj_id, key=f"refund:{adj_id}" if approve else None,
                   amount=int(adj["totals"]["total"]) if approve else None)

    def pending_refund(self, txn_id: str) -> str | None:
        """The id of `txn_id`'s refund still pending approval, or None."""
        return next((a for a in self.objects("adjustment") if self.peek(a)["transaction_id"] == txn_id
                     and self.peek(a)["status"] == "pending_approval"), None)

    # ---- stories ----------------------------------------------------------------------
    def lifecycle(self) -> list[Event]:
        """A subscription's year in brief, every event type in a legal order: a trial (its new
        customer and address), more seats, the customer's name given, the trial's end, a declined
        renewal recovered, a refund approved and another rejected, a pause and a resume, a
        cancellation at the period's end (scheduled, then made: `cancel`)."""
        start = len(self.events)
        sub = self.subscribe(trial=True)
        self.change_quantity(sub, 3)
        self.update_customer(str(self.get(sub)["customer_id"]), name="Sam Miller")
        self.renew(sub)
        self.renew(sub, pay=False)
        txn = self.recover(sub)
        self.refund(txn)
        self.refund(txn, review="rejected")
        self.pause(sub)
        self.resume(sub)
        self.cancel(sub, at_period_end=True)
        return self.events[start:]

    def effect_story(self) -> list[Event]:
        """One event of each effectful type: a licence bought once (a one-time price: its
        ``transaction.completed`` with no subscription, owing ``fulfil:{txn}`` like any), a
        completed checkout, a new subscription, a
        past-due renewal, a refund approved (and another Paddle rejected: it owes nothing), a
        cancellation; then a trial paused (scheduled, then at its end: `pause`) and resumed, its
        customer's name given, so that every
        type the world sends is in it (a team's key on ``subscription.paused`` has its event);
        last a yearly plan bought and canceled at its period's end (scheduled, then a year on).
        The story's every event, effectful or not: the catalog sends those the receiver's keys
        make effectful."""
        start = len(self.events)
        self.buy()
        sub = self.subscribe()
        self.renew(sub, pay=False)
        first = next(t for t in self.objects("transaction") if self.get(t)["subscription_id"] == sub)
        self.refund(first)
        self.refund(first, review="rejected")
        self.cancel(sub)
        trial = self.subscribe(trial=True)
        self.pause(trial)
        self.resume(trial)
        self.update_customer(str(self.get(trial)["customer_id"]), name="Sam Miller")
        self.cancel(self.subscribe(annual=True), at_period_end=True)
        return self.events[start:]

    def state_story(self) -> list[Event]:
        """A subscription's life: created, more seats, past due, recovered, paused at once and
        resumed (`pause`, `resume`: ``active`` -> ``paused`` -> ``active``, a new period billed;
        developer.paddle.com/build/subscriptions/pause-subscriptions), canceled at its period's
        end (scheduled, then made); with its transactions' events (the checkout's: created,
        ready, paid, completed; the renewal's: created, billed, past due, paid, completed; the
        resume's: created, billed, paid, completed)."""
        start = len(self.events)
        sub = self.subscribe()
        self.change_quantity(sub, 2)
        self.renew(sub, pay=False)
        self.recover(sub)
        self.pause(sub)
        self.resume(sub)
        self.cancel(sub, at_period_end=True)
        return [e for e in self.events[start:] if e.object_id == sub
                or (e.object_type == "transaction" and self.get(e.object_id)["subscription_id"] == sub)]

    def distinct_story(self) -> list[Event]:
        """Several effects of one object: one subscription past due in two periods."""
        start = len(self.events)
        sub = self.subscribe()
        self.renew(sub, pay=False)
        self.recover(sub)
        self.renew(sub, pay=False)
        return [e for e in self.events[start:] if e.type == "subscription.past_due"]

    def related_groups(self, count: int = 2) -> list[tuple[Event, ...]]:
        """`count` checkouts with a subscription; each one's events (``transaction.created``
        through ``subscription.created`` and ``subscription.activated`` to
        ``transaction.completed``), which Paddle sends together."""
        groups = []
        for _ in range(count):
            start = len(self.events)
            self.subscribe()
            groups.append(tuple(self.events[start:]))
        return groups

    def refund_pair(self) -> tuple[Event, Event]:
        """Two partial refunds of one completed transaction, a quarter each, the second requested
        once Paddle approved the first: their approvals' ``adjustment.updated`` events R1, R2, the
        events that owe each refund (Paddle allows several refunds of one transaction, one pending
        at a time)."""
        txn = self.buy()
        self.refund(txn)
        self.refund(txn)
        r1, r2 = [e for e in self.events if e.type == "adjustment.updated"][-2:]
        return r1, r2

    def failure_recovery(self) -> tuple[list[Event], Event]:
        """A renewal declined, then paid ("Payment recovery"): a subscription's story (its checkout,
        the renewal's ``subscription.updated`` (new period), its transaction created, billed, its
        payment failed and ``past_due``, ``subscription.updated`` to ``past_due`` and
        ``subscription.past_due``, the renewal's transaction paid and completed,
        ``subscription.updated`` back to ``active``) and its failure event, the ``past_due``."""
        start = len(self.events)
        sub = self.subscribe()
        self.renew(sub, pay=False)
        self.recover(sub)
        story = self.events[start:]
        return story, next(e for e in story if e.type == "subscription.past_due")

    def unknown_event(self) -> Event:
        """An ``address.updated`` notification (a SaaS handles no such thing): not recorded."""
        at = self._tick()
        address_id = self.new_id("add")
        address = ps.address(address_id, customer_id=self.new_id("ctm"), country_code=_COUNTRY,
                             postal_code=_POSTAL_CODE, created=ps.iso_ms(at))
        return Event(id=self.new_id("evt"), type="address.updated", created=at // 1_000_000, created_us=at,
                     object_type="address", object_id=address_id, version=1, object=address,
                     livemode=self.livemode, account=self.account, api_version="1")

    def quiet_event(self) -> Event:
        """A stateless, effectless event of the catalog (``transaction.paid``), e.g. to oversize."""
        txn = self.buy()
        return next(e for e in reversed(self.events) if e.object_id == txn and e.type == "transaction.paid")

    # ---- internals --------------------------------------------------------------------
    def _bill(self, sub: str, start_us: int, *, pay: bool, trial_ends: bool = False, resumed: bool = False) -> str:
        """The subscription's period from `start_us` and its transaction (`renew`, `resume`)."""
        current = self._typed(sub, "subscription")
        at = self._tick()
        period = (ps.iso(start_us), ps.iso(_cycle_end(start_us, current["billing_cycle"])))
        items = [{**i, "status": "active", "trial_dates": None, "previously_billed_at": period[0],
                  "next_billed_at": period[1], "updated_at": ps.iso(at)} for i in current["items"]]
        changes: dict[str, Any] = {"current_billing_period": {"starts_at": period[0], "ends_at": period[1]},
                                   "next_billed_at": period[1], "items": items, "updated_at": ps.iso(at),
                                   "first_billed_at": current["first_billed_at"] or period[0]}
        if resumed:
            changes.update(paused_at=None, scheduled_change=None)
            self._status_change(sub, "active", changes, "subscription.resumed", key=None)
        elif trial_ends:
            # a trialing subscription keeps its trial (items ``trialing``, ``trial_dates``, no
            # billing yet) until the trial's end is paid or declined: the new period comes with
            # that status change below, never on a ``trialing`` subscription
            pass
        else:
            self._transition(sub, current["status"], changes)
            self._emit("subscription.updated", sub)
        txn_id = self.new_id("txn")
        billed = ps.iso_ns(self._tick())
        txn = ps.transaction(txn_id, customer_id=current["customer_id"], address_id=current["address_id"],
                             subscription_id=sub, origin="subscription_recurring",
                             pri=self.annual_price if current["billing_cycle"] == ps.YEARLY else self.price,
                             prod=self.product, quantity=current["items"][0]["quantity"],
                             item_id=self.new_id("txnitm"), created=billed, period=period, checkout_url=None)
        txn.update(status="billed", billed_at=billed)
        self._create(txn_id, "transaction", txn)
        created = self._emit("transaction.created", txn_id)
        self._emit("transaction.billed", txn_id, after_us=created.created_us)
        moved = dict(changes) if trial_ends else {}
        if not pay:
            self._decline(txn_id)
            self._status_change(sub, "past_due", {**moved, "updated_at": ps.iso(self._tick())},
                                "subscription.past_due", key=f"dunning:{sub}:{period[0]}")
            return txn_id
        self._pay(txn_id)
        self._complete(txn_id)
        if trial_ends or resumed:
            self._status_change(sub, "active", {**moved, "updated_at": ps.iso(self._tick())},
                                "subscription.activated", key=None)
        return txn_id

    def _txn_change(self, txn_id: str, changes: Mapping[str, Any], *event_types: str,
                    key: str | None = None) -> None:
        """A change of a transaction: ``transaction.updated``, then `event_types` of the same
        version (Paddle's scenarios: "The transaction status changes to paid", then
        ``transaction.paid`` "Occurs because the transaction status changes to paid"); `key`, the
        last one's business key."""
        self._update(txn_id, changes)
        updated = self._emit("transaction.updated", txn_id)
        after = updated.created_us
        for i, event_type in enumerate(event_types):
            after = self._emit(event_type, txn_id, key=key if i == len(event_types) - 1 else None,
                               after_us=after).created_us

    def _pay(self, txn_id: str) -> None:
        txn = self._typed(txn_id, "transaction")
        at_us = self._tick()
        at = ps.iso(at_us)
        attempt = ps.payment_attempt(txn["details"]["totals"]["grand_total"], status="captured", at=at,
                                     attempt_id=self._uuid(), method_id=self.new_id("paymtd"),
                                     stored_id=self._uuid(), last4="4242", error_code=None)
        totals = {**txn["details"]["totals"], "balance": "0"}
        self._txn_change(txn_id, {"status": "paid", "payments": [attempt, *txn["payments"]],
                                  "details": {**txn["details"], "totals": totals}, "updated_at": ps.iso_ns(at_us)},
                         "transaction.paid")

    def _decline(self, txn_id: str) -> None:
        txn = self._typed(txn_id, "transaction")
        at_us = self._tick()
        at = ps.iso(at_us)
        attempt = ps.payment_attempt(txn["details"]["totals"]["grand_total"], status="error", at=at,
                                     attempt_id=self._uuid(), method_id=self.new_id("paymtd"),
                                     stored_id=self._uuid(), last4="0002", error_code="declined")
        self._txn_change(txn_id, {"status": "past_due", "payments": [attempt, *txn["payments"]],
                                  "updated_at": ps.iso_ns(at_us)},
                         "transaction.payment_failed", "transaction.past_due")

    def _complete(self, txn_id: str) -> None:
        txn = self._typed(txn_id, "transaction")
        at_us = self._tick()
        self._txn_change(txn_id, {
            "status": "completed", "billed_at": txn["billed_at"] or ps.iso(at_us), "updated_at": ps.iso_ns(at_us),
            "invoice_id": self.new_id("inv"), "invoice_number": f"{self.seller_id % 1000}-{self._rng.randrange(10**5):05d}",
            "details": ps.with_payouts(txn["details"])}, "transaction.completed", key=f"fulfil:{txn_id}")

    def _transition(self, sub: str, status: str, changes: Mapping[str, Any]) -> None:
        old = self._typed(sub, "subscription")["status"]
        if status not in SUBSCRIPTION_TRANSITIONS[old]:
            raise WorldError(f"subscription {sub}: {old} -> {status} is not a transition Paddle makes",
                             object_id=sub)
        self._update(sub, {**changes, "status": status})

    def _status_change(self, sub: str, status: str, changes: Mapping[str, Any], event_type: str, *,
                       key: str | None) -> None:
        """Move `sub` to `status`: ``subscription.updated`` carrying it, then `event_type`, both
        of the same version (Paddle's simulator scenarios: "Its status changes to canceled", then
        ``subscription.canceled`` "Occurs because the subscription status changes to canceled")."""
        self._transition(sub, status, changes)
        updated = self._emit("subscription.updated", sub)
        self._emit(event_type, sub, key=key, after_us=updated.created_us)

    def _uuid(self) -> str:
        h = "%032x" % self._rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def _emit(self, event_type: str, object_id: str, *, key: str | None = None, amount: int | None = None,
              data: dict[str, Any] | None = None, after_us: int | None = None) -> Event:
        """Emit `event_type` of `object_id`'s current version; `data` the notification's entity
        when it is not the snapshot itself (``subscription.created``'s ``transaction_id``);
        `after_us`: the time of the event of the same change just before it (this one
        follows within 90 ms; a change's first event within 0.7 s of it, so its chain of at most
        three ends before the next change's events, a second on at least)."""
        rec = self._record(object_id)
        if after_us is None:
            at = self._now_us + self._rng.randrange(1_000, 700_000)
        else:
            at = after_us + self._rng.randrange(1_000, 90_000)
        snapshot = self.get(object_id) if data is None else data
        return self._record_event(Event(
            id=self.new_id("evt"), type=event_type, created=at // 1_000_000, created_us=at,
            object_type=rec.object_type, object_id=object_id, version=len(rec.versions), object=snapshot,
            business_key=key, amount=amount, currency=str(snapshot.get("currency_code", "USD")).lower(),
            status=str(snapshot["status"]) if snapshot.get("status") is not None else None,
            livemode=self.livemode, account=self.account,
            api_version="1"))


def _cycle_end(start_us: int, cycle: Mapping[str, Any]) -> int:
    """Unix microseconds one billing cycle after `start_us`: ``month`` 30 days a cycle, ``year``
    the same instant a calendar year on (29 February to 28 February); WorldError for another
    interval."""
    frequency = int(cycle["frequency"])
    if cycle["interval"] == "month":
        return start_us + frequency * _MONTH_US
    if cycle["interval"] == "year":
        moment = datetime.fromtimestamp(start_us // 1_000_000, tz=timezone.utc)
        year = moment.year + frequency
        later = moment.replace(year=year, day=min(moment.day, calendar.monthrange(year, moment.month)[1]))
        return int(later.timestamp()) * 1_000_000 + start_us % 1_000_000
    raise WorldError(f"a billing cycle of interval {cycle['interval']!r} is not modelled (month, year)")


def _parse(value: str) -> int:
    """Unix microseconds of a time the world rendered (`paddle_shapes.parse`: 0 to 9 digits)."""
    return ps.parse(value)


#: Event type -> a story that makes a fresh world emit it (``hookproof send``).
PADDLE_SCRIPTS: Mapping[str, Callable[[PaddleWorld], object]] = {
    "transaction.created": lambda w: w.buy(),
    "transaction.updated": lambda w: w.buy(),
    "transaction.ready": lambda w: w.buy(),
    "transaction.billed": lambda w: w.renew(w.subscribe()),
    "transaction.paid": lambda w: w.buy(),
    "transaction.completed": lambda w: w.buy(),
    "transaction.payment_failed": lambda w: w.renew(w.subscribe(), pay=False),
    "transaction.past_due": lambda w: w.renew(w.subscribe(), pay=False),
    "subscription.created": lambda w: w.subscribe(),
    "subscription.trialing": lambda w: w.subscribe(trial=True),
    "subscription.activated": lambda w: w.subscribe(),
    "subscription.updated": lambda w: w.change_quantity(w.subscribe(), 2),
    "subscription.past_due": lambda w: w.renew(w.subscribe(), pay=False),
    "subscription.paused": lambda w: w.pause(w.subscribe()),
    "subscription.resumed": lambda w: w.resume(_paused(w)),
    "subscription.canceled": lambda w: w.cancel(w.subscribe()),
    "adjustment.created": lambda w: w.refund(w.buy()),
    "adjustment.updated": lambda w: w.refund(w.buy()),
    "customer.created": lambda w: w.buy(),
    "customer.updated": lambda w: w.update_customer(w.customer_of(w.buy()), name="Sam Miller"),
    "address.created": lambda w: w.buy(),
}


def _paused(world: PaddleWorld) -> str:
    sub = world.subscribe()
    world.pause(sub)
    return sub


def paddle_events_of_type(world: PaddleWorld, event_type: str, count: int = 1) -> list[Event]:
    """Run the story for `event_type` `count` times; each run's last event of that type (a
    checkout's last ``transaction.updated``, its completion's).

    Raises WorldError naming the known types for a type Paddle does not send here.
    """
    script = PADDLE_SCRIPTS.get(event_type)
    if script is None:
        raise WorldError(f"the Paddle profile sends no event {event_type!r} (known: {', '.join(PADDLE_EVENT_TYPES)})")
    found = []
    for _ in range(count):
        start = len(world.events)
        script(world)
        found.extend([e for e in world.events[start:] if e.type == event_type][-1:])
    return found
