"""One shape of test receiver: inbox_sync that also keeps each subscription's status and one
field of it in a table of its own, newest version wins (the object's ``hookproof_version``,
as every reference receiver orders states), status and field together; its broken twin
(``--option <twin_option>=1``) keeps the status that way but overwrites the field with
whichever event arrives last. `subscription_prices` and `subscription_cancellations` are two
such receivers; `field_config` is their tests' certify config, reading the field through
``[observer.state_fields]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy import text

from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent
from hookproof.receivers.inbox_sync import InboxSync

if TYPE_CHECKING:
    from hookproof.config_model import Config


class SubscriptionField(InboxSync):
    """inbox_sync plus `table` (object_id, status, `column`, version): newest version wins; a
    subclass names the table, the column (its SQL type `column_type`), the twin's option and
    the column's value in a subscription (`value`)."""

    table: ClassVar[str]
    column: ClassVar[str]
    column_type: ClassVar[str] = "TEXT"
    twin_option: ClassVar[str]
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        with self.store.transaction() as conn:
            conn.execute(text(f"CREATE TABLE IF NOT EXISTS {self.table} (object_id TEXT PRIMARY KEY, status TEXT NOT "
                              f"NULL, {self.column} {self.column_type}, version INTEGER NOT NULL)"))

    def value(self, obj: dict[str, Any]) -> str | None:
        """The column's value in subscription `obj` (as sent)."""
        raise NotImplementedError

    def process(self, event: WebhookEvent) -> Reply:
        reply = super().process(event)
        if event.type.startswith("customer.subscription.") and reply.status < 300:
            obj = event.object
            row = {"id": obj["id"], "status": obj["status"], "value": self.value(obj),
                   "version": int(obj.get("hookproof_version", 0))}
            table, column = self.table, self.column
            newer = f"excluded.version > {table}.version"
            field = f"excluded.{column}" if self.config.option(self.twin_option, 0) else \
                f"CASE WHEN {newer} THEN excluded.{column} ELSE {table}.{column} END"
            with self.store.transaction() as conn:
                conn.execute(text(f"INSERT INTO {table} (object_id, status, {column}, version) "
                                  "VALUES (:id, :status, :value, :version) ON CONFLICT (object_id) DO UPDATE SET "
                                  f"status = CASE WHEN {newer} THEN excluded.status ELSE {table}.status END, "
                                  f"{column} = {field}, "
                                  f"version = MAX(excluded.version, {table}.version)"), row)
        return reply


def field_config(receiver: type[SubscriptionField], tmp_path: Path, secret: str, options: dict[str, float], *,
                 path: str, scenarios: list[str] | None = None, fields: bool = True) -> "Config":
    """The certify config of `receiver` (its module run with `options`), its state query reading
    the field, declared at `path` in ``[observer.state_fields]`` when `fields`."""
    from examples.receivers import PROJECT_ROOT
    from hookproof.demo import receiver_config

    cfg = receiver_config(receiver.name, tmp_path, secret, seed=7, scenarios=scenarios, settle_window_s=0.15,
                          options=options, module=receiver.__module__, cwd=PROJECT_ROOT)
    assert cfg.observer is not None
    declared = {"subscription": {receiver.column: path}} if fields else {}
    query = f"SELECT object_id, status, {receiver.column} FROM {receiver.table}"
    return cfg.model_copy(update={"observer": cfg.observer.model_copy(
        update={"state": query, "state_fields": declared})})
