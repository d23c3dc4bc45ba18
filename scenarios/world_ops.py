"""The world operations `explore` may ask for, per world kind (`Profile.world`).

The state machine's delivery rules are provider-neutral; only "advance the world"
differs between providers. Each world kind has a `WorldOps`: the names of its lifecycle
operations (``actions``), the ones legal now as ``(action, object index)`` pairs
(``legal``; an object is referred to by its index among the objects of its type, so a
schedule does not depend on the ids a seed draws), and how to perform one (``apply``,
which raises the world's `WorldError` when it is not legal). Each operation is one of
the world's own (`simulator.world.world.World`, `github.GitHubWorld`,
`mercadopago.MercadoPagoWorld`, `paddle.PaddleWorld`, `shopify.ShopifyWorld`), so every event
it emits is in the provider's own terms and shapes.

`ops_for(kind)` gives a world kind's operations; `new_world_of(kind, seed, **options)`
builds a fresh world of that kind (`simulator.world.new_world`).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.world.lifecycle import TRANSITIONS

#: (action, object index or None): one operation the world allows now.
Action = tuple[str, "int | None"]

#: Lifecycle operations of the billing world (Stripe), simplest first.
#: The checkout operations (Stripe's "Fulfill orders" guide, docs.stripe.com/checkout/fulfillment):
#: ``checkout`` completes a session, in turn one paid by card at completion, one by a delayed
#: method (ACH Direct Debit in USD: completed unpaid), whose payment later succeeds
#: (``checkout.session.async_payment_succeeded``) or fails, and a subscription-mode one (a plan
#: bought through Checkout: its subscription and first invoice paid, then the session completed;
#: docs.stripe.com/billing/subscriptions/build-subscriptions). One operation for every kind: each
#: operation offered at every step thins the others' draws (a second one kept explore at its
#: default budget from finding a plan change's stale price).
ACTIONS: tuple[str, ...] = ("subscribe", "pay", "renew", "fail_renewal", "retry_invoice", "cancel", "refund",
                            "subscribe_incomplete", "expire_incomplete", "mark_unpaid",
                            "checkout", "settle_delayed", "fail_delayed")
#: The billing world's operations when a subscription's state has fields beyond its status
#: (``[observer.state_fields]``, its price): `ACTIONS` and a plan change.
PRICED_ACTIONS: tuple[str, ...] = (*ACTIONS, "change_plan")


@dataclass(frozen=True)
class WorldOps:
    """A world kind's operations for the state machine.

    Attributes:
        kind: the world kind (``billing``, ``github``, ``mercadopago``, ``paddle``).
        actions: every operation name, simplest first.
        legal: the operations the world allows now, as (action, object index) pairs.
        apply: performs one (world, action, object index); raises WorldError when not legal.
        moves: the operations that move an object's state (a cancellation, a failed renewal,
            a close), each with the object type its index refers to, whose state it moves;
            explore's `deliver_newest_first` plays one on an object whose earlier event was
            not sent yet. Empty: none known (a user's catalog).
        kinds: the operations that, offered without an index, take turns at kinds of object
            (the billing world's ``checkout``: a card, a delayed-method and a subscription-mode
            session), each with the kinds legal now as (action, kind) pairs: `focused`
            operations, drawn among few, offer each kind apart.
        closing: the operations after which the world's objects change no more (Shopify's
            ``uninstall``: the shop's orders are the app's no longer); a walk over every
            operation plays them last (`scenarios.bursts`).
    """

    kind: str
    actions: tuple[str, ...]
    legal: Callable[[Any], list[Action]]
    apply: Callable[[Any, str, "int | None"], None]
    moves: Mapping[str, str] = field(default_factory=dict, hash=False)
    kinds: Mapping[str, Callable[[Any], list[Action]]] = field(default_factory=dict, hash=False)
    closing: frozenset[str] = frozenset()


def _nth(world: Any, action: str, object_type: str, index: int | None) -> str:
    ids = world.objects(object_type)
    if index is None or not 0 <= index < len(ids):
        raise WorldError(f"{action}: no {object_type} #{index}")
    return str(ids[index])


# ---- billing (Stripe) ------------------------------------------------------------------------

def legal_actions(world: Any) -> list[Action]:
    """The billing world's lifecycle operations allowed now, simplest first."""
    # subscribe_incomplete: the first payment fails (Stripe's incomplete), which may expire
    # (incomplete_expired); mark_unpaid: the dunning of a past_due one gives up (unpaid)
    out: list[Action] = [("subscribe", None), ("pay", None)]
    subs = world.objects("subscription")
    for i, sub in enumerate(subs):
        status = world.peek(sub)["status"]
        if status in ("active", "past_due", "trialing"):
            out.append(("renew", i))
        if status in ("active", "trialing"):
            # a second failed renewal of a past_due subscription bumps its version with no
            # event carrying it, so a receiver that fetches state would look "ahead" of the truth
            out.append(("fail_renewal", i))
        if status == "past_due":
            out.append(("mark_unpaid", i))
        if status == "incomplete":
            out.append(("expire_incomplete", i))
        if "canceled" in TRANSITIONS["subscription"].get(status, ()):
            out.append(("cancel", i))
    for i, inv in enumerate(world.objects("invoice")):
        invoice = world.peek(inv)
        if invoice["status"] == "open" and world.peek(invoice["subscription"])["status"] != "canceled":
            out.append(("retry_invoice", i))
    for i, ch in enumerate(world.objects("charge")):
        c = world.peek(ch)
        if c["amount"] - c["amount_refunded"] > 0:
            out.append(("refund", i))
    out.append(("subscribe_incomplete", None))
    if _checkout_turns(world):
        out.append(("checkout", None))
    for i, cs in enumerate(world.objects("checkout.session")):
        if _pending_delayed(world, cs):
            out += [("settle_delayed", i), ("fail_delayed", i)]
    return out


def _checkout_turns(world: Any) -> tuple[int, ...]:
    """The kinds of session the ``checkout`` operation takes turns at, within the shop's
    `World.checkout_modes`: 0 a card payment, 1 a delayed-method payment (payment mode), 2 a plan
    (subscription mode)."""
    modes = getattr(world, "checkout_modes", frozenset({"payment", "subscription"}))
    return (*((0, 1) if "payment" in modes else ()), *((2,) if "subscription" in modes else ()))


def _checkout_kinds(world: Any) -> list[Action]:
    """``checkout`` of each kind the shop opens (`_checkout_turns`), as (action, kind)."""
    return [("checkout", turn) for turn in _checkout_turns(world)]


def _pending_delayed(world: Any, session: str) -> bool:
    """True when `session` completed unpaid and its delayed payment was not settled yet
    (its payment intent still ``processing``)."""
    cs = world.peek(session)
    return (cs["status"] == "complete" and cs["payment_status"] == "unpaid" and cs["payment_intent"] is not None
            and world.peek(cs["payment_intent"])["status"] == "processing")


def priced_legal_actions(world: Any) -> list[Action]:
    """`legal_actions`, then a plan change of each active or trialing subscription (Stripe
    moves a subscription to another price without changing its status; a past_due or
    canceled one is left alone)."""
    out = legal_actions(world)
    subs = world.objects("subscription")
    out += [("change_plan", i) for i, sub in enumerate(subs) if world.peek(sub)["status"] in ("active", "trialing")]
    return out


#: Seconds the billing world's clock moves before each operation (`apply_action`).
OPERATION_GAP_S = 1


def apply_action(world: Any, action: str, index: int | None) -> None:
    """Perform one billing lifecycle operation (raises WorldError when it is not legal).

    The world's clock first moves on `OPERATION_GAP_S`, so each operation's events carry a
    later ``created`` second than the previous operation's, as a provider's separate
    operations do (within one operation, events share a second, as Stripe's often do; a
    renewal, a failed renewal and a dunning retry move further, to their period's end or
    scheduled attempt: `World.renew`, `World.retry_invoice`)."""
    world.advance(OPERATION_GAP_S)

    def customer() -> str:
        existing = world.objects("customer")
        return existing[0] if existing else world.event(world.create_customer()).object_id

    if action == "subscribe":
        world.subscribe(customer())
    elif action == "pay":
        world.pay(customer())
    elif action == "renew":
        world.renew(_nth(world, action, "subscription", index), pay=True)
    elif action == "fail_renewal":
        world.renew(_nth(world, action, "subscription", index), pay=False)
    elif action == "retry_invoice":
        world.retry_invoice(_nth(world, action, "invoice", index), pay=True)
    elif action == "cancel":
        world.cancel(_nth(world, action, "subscription", index))
    elif action == "refund":
        ch = world.get(_nth(world, action, "charge", index))
        left = ch["amount"] - ch["amount_refunded"]
        world.refund(ch["id"], max(1, left // 2))
    elif action == "subscribe_incomplete":  # the first payment fails: incomplete, its invoice open
        world.subscribe(customer(), incomplete=True)
    elif action == "expire_incomplete":
        world.expire_incomplete(_nth(world, action, "subscription", index))
    elif action == "mark_unpaid":  # the world refuses it unless the subscription is past_due
        world.mark_unpaid(_nth(world, action, "subscription", index))
    elif action == "checkout":  # in turn (or the kind `index` names): a one-time price paid by card, by a
        turns = _checkout_turns(world)  # delayed method, a plan (subscription mode)
        if not turns:
            raise WorldError("checkout: the shop opens no Checkout Session (checkout_modes = [])")
        if index is not None and index not in turns:
            raise WorldError(f"checkout: the shop opens no session of kind {index} (it opens {list(turns)})")
        turn = turns[len(world.objects("checkout.session")) % len(turns)] if index is None else index
        if turn == 2:
            world.subscribe_through_checkout(customer())
        else:
            session = world.open_checkout(customer(), world.create_price(interval=None), asynchronous=turn == 1)
            world.complete_checkout(session)
    elif action in ("settle_delayed", "fail_delayed"):
        session = _nth(world, action, "checkout.session", index)
        if not _pending_delayed(world, session):
            raise WorldError(f"{action}: checkout session {session} has no pending delayed payment", object_id=session)
        world.settle_async_checkout(session, succeeded=action == "settle_delayed")
    elif action == "change_plan":  # a new monthly price in the customer's currency
        sub = world.peek(_nth(world, action, "subscription", index))
        if sub["status"] not in ("active", "trialing"):
            raise WorldError(f"change_plan: subscription {sub['id']} is {sub['status']}", object_id=sub["id"])
        world.change_plan(sub["id"], world.create_price(currency=world.peek(sub["customer"])["currency"]))
    else:
        raise WorldError(f"unknown action {action!r} (known: {', '.join(PRICED_ACTIONS)})")


# ---- GitHub (the repository world) -------------------------------------------------------------

#: ``triage``: an open issue labeled, commented on and closed within one ``updated_at`` second
#: (`GitHubWorld.triage`: GitHub's ``updated_at`` counts whole seconds and it sends no event
#: time, so only the REST API tells those three events apart); ``rerun_ci`` and ``bot_merge``:
#: an open pull request closed and reopened, or pushed to and merged, within one second
#: (`GitHubWorld.rerun_ci`, `GitHubWorld.bot_merge`); ``edit_comment`` and ``delete_comment``:
#: an issue's newest comment edited or deleted; to an App sent the checks (a check suite per push),
#: ``rerun_suite``, ``rerun_check`` and ``request_action``: a completed suite re-run whole
#: (`GitHubWorld.rerequest_suite`), its newest ``test`` run re-run (`rerequest_check_run`), its
#: newest ``lint`` run's ``autofix`` button clicked (`request_action`), each legal once the suite is
#: completed and offered after every other operation, so a world told no checks draws as it did.
GITHUB_ACTIONS: tuple[str, ...] = (
    "open_issue", "push", "open_pull_request", "install", "comment", "label", "edit", "close_issue",
    "reopen_issue", "synchronize", "merge", "close_pull_request", "uninstall", "unlabel", "triage", "suspend",
    "unsuspend", "add_repository", "remove_repository", "edit_pull_request", "edit_comment", "delete_comment",
    "rerun_ci", "bot_merge", "rerun_suite", "rerun_check", "request_action",
)
#: The check operations, each on a completed check suite (by its index) and its newest run of a name.
_CHECK_OPS: Mapping[str, str | None] = {"rerun_suite": None, "rerun_check": "test", "request_action": "lint"}


def _github_legal(world: Any) -> list[Action]:
    out: list[Action] = [("open_issue", None), ("push", None), ("open_pull_request", None), ("install", None)]
    for i, issue in enumerate(world.objects("issue")):
        current = world.peek(issue)
        out += [("comment", i), ("label", i), ("edit", i)]
        if current["labels"]:
            out.append(("unlabel", i))
        out.append(("close_issue", i) if current["state"] == "open" else ("reopen_issue", i))
        if current["state"] == "open":
            out.append(("triage", i))
        if world.comments_of(issue):
            out += [("edit_comment", i), ("delete_comment", i)]
    for i, pr in enumerate(world.objects("pull_request")):
        if world.peek(pr)["state"] == "open":
            out += [("synchronize", i), ("merge", i), ("close_pull_request", i), ("edit_pull_request", i),
                    ("rerun_ci", i), ("bot_merge", i)]
    home = str(world.installation_id)
    for i, inst in enumerate(world.objects("installation")):
        status = world.peek(inst)["status"]
        if inst == home or status == "deleted":
            continue
        out.append(("uninstall", i))
        if status == "active":
            out += [("suspend", i), ("add_repository", i)]
            if world.repositories_of(inst)[1:]:
                out.append(("remove_repository", i))
        else:
            out.append(("unsuspend", i))
    for i, suite in enumerate(world.objects("check_suite")):
        if world.peek(suite)["status"] == "completed":
            out += [(action, i) for action in _CHECK_OPS]
    return out


def _github_apply(world: Any, action: str, index: int | None) -> None:
    simple: Mapping[str, Callable[[], object]] = {
        "open_issue": world.open_issue, "push": world.push, "open_pull_request": world.open_pull_request,
        "install": world.install}
    on_issue: Mapping[str, Callable[[str], object]] = {
        "comment": world.comment, "label": world.label_issue, "edit": world.edit_issue,
        "close_issue": world.close_issue, "reopen_issue": world.reopen_issue, "unlabel": world.unlabel_issue,
        "triage": world.triage}
    on_installation: Mapping[str, Callable[[str], object]] = {
        "uninstall": world.uninstall, "suspend": world.suspend, "unsuspend": world.unsuspend,
        "add_repository": world.add_repository, "remove_repository": world.remove_repository}
    if action in simple:
        simple[action]()
    elif action in on_issue:
        on_issue[action](_nth(world, action, "issue", index))
    elif action in ("edit_comment", "delete_comment"):
        issue = _nth(world, action, "issue", index)
        comments = world.comments_of(issue)
        if not comments:
            raise WorldError(f"{action}: issue {issue} has no comment", object_id=issue)
        (world.edit_comment if action == "edit_comment" else world.delete_comment)(comments[-1])
    elif action in ("edit_pull_request", "rerun_ci", "bot_merge"):
        pr = _nth(world, action, "pull_request", index)
        {"edit_pull_request": world.edit_pull_request, "rerun_ci": world.rerun_ci, "bot_merge": world.bot_merge}[action](pr)
    elif action in ("synchronize", "merge", "close_pull_request"):
        pr = _nth(world, action, "pull_request", index)
        if world.get(pr)["state"] != "open":
            raise WorldError(f"{action}: pull request {pr} is not open", object_id=pr)
        if action == "synchronize":
            world.synchronize(pr)
        else:
            world.close_pull_request(pr, merged=action == "merge")
    elif action in on_installation:
        on_installation[action](_nth(world, action, "installation", index))
    elif action in _CHECK_OPS:
        suite = _nth(world, action, "check_suite", index)
        if world.peek(suite)["status"] != "completed":
            raise WorldError(f"{action}: check suite {suite} is not completed", object_id=suite)
        name = _CHECK_OPS[action]
        if name is None:
            world.rerequest_suite(suite)
            return
        run = [r for r in world.runs_of(suite) if world.peek(r)["name"] == name][-1]
        (world.rerequest_check_run if action == "rerun_check" else world.request_action)(run)
    else:
        raise WorldError(f"unknown action {action!r} (known: {', '.join(GITHUB_ACTIONS)})")


# ---- Mercado Pago (payments and merchant orders) ------------------------------------------------

MERCADOPAGO_ACTIONS: tuple[str, ...] = ("pay", "pay_pix", "reject", "open_order", "pay_order", "approve_pix",
                                        "refund", "charge_back")


def _cents(value: Any) -> int:
    return int(round(float(value) * 100))


def _mercadopago_legal(world: Any) -> list[Action]:
    out: list[Action] = [("pay", None), ("pay_pix", None), ("reject", None), ("open_order", None)]
    for i, order in enumerate(world.objects("merchant_order")):
        if not world.peek(order)["payments"]:
            out.append(("pay_order", i))
    for i, pay in enumerate(world.objects("payment")):
        p = world.peek(pay)
        if p["status"] == "pending":
            out.append(("approve_pix", i))
        if p["status"] == "approved" and _cents(p["transaction_amount"]) > _cents(p["transaction_amount_refunded"]):
            out.append(("refund", i))
        if p["status"] in ("approved", "refunded"):
            out.append(("charge_back", i))
    return out


def _mercadopago_apply(world: Any, action: str, index: int | None) -> None:
    if action == "pay":
        world.pay()
    elif action == "pay_pix":
        world.pay(method="pix")
    elif action == "reject":
        world.pay(approve=False)
    elif action == "open_order":
        world.open_order()
    elif action == "pay_order":
        world.pay(_nth(world, action, "merchant_order", index))
    elif action == "approve_pix":
        pay = _nth(world, action, "payment", index)
        if world.get(pay)["status"] != "pending":
            raise WorldError(f"{action}: payment {pay} is not pending", object_id=pay)
        world.approve_pending(pay)
    elif action == "refund":
        pay = _nth(world, action, "payment", index)
        p = world.get(pay)
        if p["status"] != "approved":
            raise WorldError(f"{action}: payment {pay} is {p['status']}, not approved", object_id=pay)
        left = _cents(p["transaction_amount"]) - _cents(p["transaction_amount_refunded"])
        world.refund(pay, max(1, left // 2))
    elif action == "charge_back":
        world.charge_back(_nth(world, action, "payment", index))
    else:
        raise WorldError(f"unknown action {action!r} (known: {', '.join(MERCADOPAGO_ACTIONS)})")


# ---- Paddle Billing ------------------------------------------------------------------------------

#: ``pause`` and ``resume``, last so that the draws of the others move as little as they can:
#: an ``active`` subscription paused at once (Paddle's "Pause immediately", its status ``paused``:
#: developer.paddle.com/build/subscriptions/pause-subscriptions) and a paused one resumed
#: (`PaddleWorld.pause`, `PaddleWorld.resume`).
PADDLE_ACTIONS: tuple[str, ...] = ("buy", "subscribe", "renew", "fail_renewal", "recover", "change_quantity",
                                   "cancel", "refund", "approve_refund", "reject_refund", "pause", "resume")


def _paddle_legal(world: Any) -> list[Action]:
    """Operations that move a status (a subscription's failed renewal, recovery, cancellation;
    Paddle's review of a refund pending approval, approving or rejecting it) come before those
    that leave it (a renewal, a quantity change, a refund requested): `explore`'s reordering
    rules find a blind overwrite only between two events of one object whose statuses differ,
    so those are drawn first. A transaction with a refund pending approval takes no other
    (`PaddleWorld.refund`). Last, after every other, a pause of each ``active`` subscription and
    a resume of each ``paused`` one (moves too, appended so the others keep their places:
    Paddle pauses an active subscription; a past-due one is not paused here, the world making no
    ``past_due`` -> ``paused``; a resume needs one ``paused``, developer.paddle.com/errors/
    subscriptions/subscription_must_be_paused)."""
    out: list[Action] = [("subscribe", None), ("buy", None)]
    moves: list[Action] = []
    keeps: list[Action] = []
    pauses: list[Action] = []
    for i, sub in enumerate(world.objects("subscription")):
        status = world.peek(sub)["status"]
        if status == "active":
            moves.append(("fail_renewal", i))
        if status == "past_due":
            moves.append(("recover", i))
        if status != "canceled":
            moves.append(("cancel", i))
        if status in ("active", "past_due"):
            keeps += [("renew", i), ("change_quantity", i)]
        if status == "active":
            pauses.append(("pause", i))
        if status == "paused":
            pauses.append(("resume", i))
    pending = set()
    for i, adj in enumerate(world.objects("adjustment")):
        if world.peek(adj)["status"] == "pending_approval":
            pending.add(world.peek(adj)["transaction_id"])
            moves += [("approve_refund", i), ("reject_refund", i)]
    for i, txn in enumerate(world.objects("transaction")):
        if world.peek(txn)["status"] == "completed" and txn not in pending:
            keeps.append(("refund", i))
    return out + moves + keeps + pauses


def _paddle_apply(world: Any, action: str, index: int | None) -> None:
    if action == "buy":
        world.buy()
    elif action == "subscribe":
        world.subscribe()
    elif action in ("renew", "fail_renewal"):
        world.renew(_nth(world, action, "subscription", index), pay=action == "renew")
    elif action == "recover":
        world.recover(_nth(world, action, "subscription", index))
    elif action == "change_quantity":
        sub = _nth(world, action, "subscription", index)
        world.change_quantity(sub, int(world.get(sub)["items"][0]["quantity"]) + 1)
    elif action == "cancel":
        sub = _nth(world, action, "subscription", index)
        if world.get(sub)["status"] == "canceled":
            raise WorldError(f"{action}: subscription {sub} is canceled already", object_id=sub)
        world.cancel(sub)
    elif action == "refund":  # requested: pending approval until Paddle's review, a step of its own
        world.refund(_nth(world, action, "transaction", index), review=None)
    elif action in ("approve_refund", "reject_refund"):
        world.review_refund(_nth(world, action, "adjustment", index), approve=action == "approve_refund")
    elif action == "pause":
        sub = _nth(world, action, "subscription", index)
        if world.get(sub)["status"] != "active":  # the world would pause a trialing or paused one too
            raise WorldError(f"{action}: subscription {sub} is {world.get(sub)['status']}, not active", object_id=sub)
        world.pause(sub)
    elif action == "resume":
        world.resume(_nth(world, action, "subscription", index))
    else:
        raise WorldError(f"unknown action {action!r} (known: {', '.join(PADDLE_ACTIONS)})")


# ---- Shopify --------------------------------------------------------------------------------------

#: ``quick_cancel``: an order paid (or partly refunded) and cancelled within one ``updated_at`` second
#: (`ShopifyWorld.quick_cancel`: Shopify's ``updated_at`` counts whole seconds; only
#: ``X-Shopify-Triggered-At`` orders the changes).
SHOPIFY_ACTIONS: tuple[str, ...] = ("sign_up", "checkout", "checkout_manual", "mark_paid", "note", "tag", "refund",
                                    "cancel", "quick_cancel", "uninstall")


def _shopify_legal(world: Any) -> list[Action]:
    """Operations that move an order's ``financial_status`` come before those that leave it
    (a note, a customer's tag): `explore`'s reordering rules find a blind overwrite only
    between two events of one order whose states differ, so those are drawn first. Only the
    objects of the shop the app is installed on change (`ShopifyWorld.owns`): after an
    uninstall, a checkout or a sign-up is a new shop's (`ShopifyWorld._next_shop`)."""
    out: list[Action] = [("sign_up", None), ("checkout", None), ("checkout_manual", None)]
    moves: list[Action] = []
    keeps: list[Action] = []
    for i, order in enumerate(world.objects("order")):
        o = world.peek(order)
        if o["cancelled_at"] is not None or not world.owns(order):  # a shop that uninstalled the app: no more
            continue
        if o["financial_status"] == "pending":
            moves.append(("mark_paid", i))
        elif o["financial_status"] in ("paid", "partially_refunded"):
            moves.append(("refund", i))
        moves.append(("cancel", i))
        if o["financial_status"] == "pending" or sum(li["current_quantity"] > 0 for li in o["line_items"]) >= 2:
            moves.append(("quick_cancel", i))
        keeps.append(("note", i))
    out += moves + keeps + [("tag", i) for i, c in enumerate(world.objects("customer")) if world.owns(c)]
    if world.installed and not world.uninstalls:  # once: a named shop's second would owe its purge again
        out.append(("uninstall", None))
    return out


def _shopify_apply(world: Any, action: str, index: int | None) -> None:
    if action == "sign_up":
        world.create_customer()
    elif action in ("checkout", "checkout_manual"):
        world.place_order(paid=action == "checkout")
    elif action == "tag":
        world.tag_customer(_nth(world, action, "customer", index))
    elif action in ("mark_paid", "note", "refund", "cancel", "quick_cancel"):
        order = _nth(world, action, "order", index)
        {"mark_paid": world.mark_paid, "note": world.add_note, "refund": world.refund, "cancel": world.cancel,
         "quick_cancel": world.quick_cancel}[action](order)
    elif action == "uninstall":
        world.uninstall()
    else:
        raise WorldError(f"unknown action {action!r} (known: {', '.join(SHOPIFY_ACTIONS)})")


#: Per world kind, the operations that move an object's state, with the object type their
#: index refers to (`WorldOps.moves`). Left out: those that leave the state as it is (a
#: renewal, a note, a label, a partial refund of a Mercado Pago payment) and those whose index
#: is another object than the one whose state moves (Stripe's ``retry_invoice``).
BILLING_MOVES: Mapping[str, str] = {"fail_renewal": "subscription", "cancel": "subscription",
                                    "mark_unpaid": "subscription", "expire_incomplete": "subscription"}
GITHUB_MOVES: Mapping[str, str] = {"close_issue": "issue", "reopen_issue": "issue", "triage": "issue",
                                   "merge": "pull_request", "close_pull_request": "pull_request",
                                   "bot_merge": "pull_request",
                                   "suspend": "installation", "unsuspend": "installation", "uninstall": "installation"}
MERCADOPAGO_MOVES: Mapping[str, str] = {"approve_pix": "payment", "charge_back": "payment"}
PADDLE_MOVES: Mapping[str, str] = {"fail_renewal": "subscription", "recover": "subscription", "cancel": "subscription",
                                   "approve_refund": "adjustment", "reject_refund": "adjustment",
                                   "pause": "subscription", "resume": "subscription"}
SHOPIFY_MOVES: Mapping[str, str] = {"mark_paid": "order", "refund": "order", "cancel": "order", "quick_cancel": "order"}

#: World kind -> its operations.
WORLD_OPS: Mapping[str, WorldOps] = {
    "billing": WorldOps("billing", ACTIONS, legal_actions, apply_action, BILLING_MOVES, {"checkout": _checkout_kinds}),
    "github": WorldOps("github", GITHUB_ACTIONS, _github_legal, _github_apply, GITHUB_MOVES),
    "mercadopago": WorldOps("mercadopago", MERCADOPAGO_ACTIONS, _mercadopago_legal, _mercadopago_apply,
                            MERCADOPAGO_MOVES),
    "paddle": WorldOps("paddle", PADDLE_ACTIONS, _paddle_legal, _paddle_apply, PADDLE_MOVES),
    "shopify": WorldOps("shopify", SHOPIFY_ACTIONS, _shopify_legal, _shopify_apply, SHOPIFY_MOVES,
                        closing=frozenset({"uninstall"})),
}
#: The billing world's operations with plan changes (`PRICED_ACTIONS`): a plan change moves
#: the state of a subscription whose price the observer reads.
PRICED_BILLING_OPS = WorldOps("billing", PRICED_ACTIONS, priced_legal_actions, apply_action,
                              {**BILLING_MOVES, "change_plan": "subscription"}, {"checkout": _checkout_kinds})


def ops_for(kind: str, *, priced: bool = False) -> WorldOps:
    """The operations of world `kind` (with `priced`, the billing world's plan changes too:
    `PRICED_BILLING_OPS`). Raises ValueError naming the kinds explore drives."""
    if priced and kind == "billing":
        return PRICED_BILLING_OPS
    ops = WORLD_OPS.get(kind)
    if ops is None and kind.startswith("catalog:"):  # a user's own event catalog
        from hookproof.scenarios.catalog_ops import catalog_ops

        return catalog_ops(kind)
    if ops is None:
        raise ValueError(f"explore has no operations for the {kind!r} world (it drives: {', '.join(WORLD_OPS)})")
    return ops


#: Rounds of every legal operation `walk` plays on a fresh world: two in order, two reversed,
#: two in order, so of two operations excluding each other on an object made in either kind
#: of round (a delayed checkout's payment settled or failed), each plays: the billing world's
#: ``checkout`` opens a card, a delayed-method and a subscription-mode session in turn, so its
#: delayed sessions come in the second round (failed in the third, reversed) and the fifth
#: (settled in the sixth, in order).
WALK_ROUNDS = 6
#: The most operations `walk` plays after its rounds to reach those the rounds never played: an
#: operation legal only after another on the same object, which the rounds' order ends first (a
#: GitHub installation's ``unsuspend``, suspended and uninstalled in one round; a pull request's
#: ``rerun_ci``, merged first), a search draws all the same.
REACH_STEPS = 200


def walk(ops: WorldOps, world: Any, *, allowed: Iterable[str] | None = None,
         rounds: int = WALK_ROUNDS) -> dict[str, set[str]]:
    """Play every legal operation of `ops` on `world` (those named in `allowed`; None: all),
    `rounds` times, some rounds in reverse (`WALK_ROUNDS`); an operation an earlier one of its
    round made illegal is passed over. Then, while some operation never played, up to
    `REACH_STEPS` more: one drawn from a fixed seed among the legal ones played least (never
    played first), so the world moves on to where the rest become legal. Returns, per action
    played, the world's names of the event types its plays emitted."""
    keep = None if allowed is None else frozenset(allowed)
    emitted: dict[str, set[str]] = {}

    plays: Counter[str] = Counter()

    def play(action: str, index: int | None) -> None:
        plays[action] += 1
        start = len(world.events)
        try:
            ops.apply(world, action, index)
        except WorldError:  # an earlier operation made it illegal
            return
        emitted.setdefault(action, set()).update(e.type for e in world.events[start:])

    for round_no in range(rounds):
        legal = [a for a in ops.legal(world) if keep is None or a[0] in keep]
        for action, index in (legal if round_no % 4 < 2 else reversed(legal)):  # either of two exclusive ones
            play(action, index)
    wanted = {a for a in ops.actions if keep is None or a in keep}
    draw = random.Random(0)
    for _ in range(REACH_STEPS if rounds else 0):
        if not wanted - emitted.keys():
            break
        legal = [a for a in ops.legal(world) if keep is None or a[0] in keep]
        if not legal:
            break
        fewest = min(plays[a] for a, _ in legal)  # never played first, else the least played
        play(*draw.choice([a for a in legal if plays[a[0]] == fewest]))
    return emitted


def focused(ops: WorldOps, sends: Callable[[str], bool], fresh: Callable[[], Any]) -> WorldOps:
    """`ops` drawing only the operations that emit a type the endpoint is sent (`sends`, world
    type names), when that loses nothing: an endpoint listing Checkout's events alone is then
    told checkouts, delayed payments and refunds, not subscriptions it is never sent, so a
    search's budget goes to what the receiver handles (a delayed checkout needs two draws of
    ``checkout`` and one of ``settle_delayed``; among every billing operation, searches of a
    hundred examples drew none).

    `fresh` makes a world as the search's examples are made (told what the endpoint is sent,
    the shop's Checkout modes). Every operation is walked (`walk`); those emitting nothing the
    endpoint is sent are left out unless, without them, the walk reaches fewer sent types (an
    operation another one needs first): then `ops` as they are. An operation taking turns at
    kinds (`WorldOps.kinds`) is offered once per kind, so a delayed checkout is one draw.
    Operations stay applicable (a schedule naming one replays); only the draws change."""
    if ops.kind not in WORLD_OPS:  # a user's catalog: its operations are its own types
        return ops
    emitted = walk(ops, fresh())
    useful = frozenset(a for a, types in emitted.items() if any(sends(t) for t in types))
    if not useful or useful == set(emitted):
        return ops
    reach = {t for types in emitted.values() for t in types if sends(t)}
    if {t for types in walk(ops, fresh(), allowed=useful).values() for t in types if sends(t)} != reach:
        return ops
    legal, kinds = ops.legal, ops.kinds

    def useful_legal(world: Any) -> list[Action]:
        out: list[Action] = []
        for action, index in legal(world):
            if action in useful:
                out += kinds[action](world) if index is None and action in kinds else [(action, index)]
        return out or legal(world)

    return replace(ops, legal=useful_legal)


def new_world_of(kind: str, seed: int, **options: Any) -> Any:
    """A fresh world of `kind` from `seed` (`simulator.world.new_world`; `options` are its keywords)."""
    from hookproof.simulator.world import new_world

    return new_world(kind, seed, **options)


__all__ = ["ACTIONS", "PRICED_ACTIONS", "PRICED_BILLING_OPS", "Action", "GITHUB_ACTIONS", "MERCADOPAGO_ACTIONS", "PADDLE_ACTIONS", "SHOPIFY_ACTIONS", "WORLD_OPS",
           "REACH_STEPS", "WALK_ROUNDS", "WorldOps", "apply_action", "focused", "legal_actions", "new_world_of", "ops_for",
           "priced_legal_actions", "walk"]
