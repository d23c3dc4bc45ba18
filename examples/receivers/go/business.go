package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Effect is one business effect: what GET /hookproof/observe lists under "effects".
type Effect struct {
	BusinessKey string `json:"business_key"`
	Amount      *int64 `json:"amount"`
}

// State is a subscription's status at a version (the object's hookproof_version).
type State struct {
	ObjectID string `json:"object_id"`
	Status   string `json:"status"`
	Version  int64  `json:"version"`
}

func str(obj map[string]any, key string) string {
	if s, ok := obj[key].(string); ok {
		return s
	}
	return ""
}

func num(obj map[string]any, key string) (int64, bool) {
	if n, ok := obj[key].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			return v, true
		}
	}
	return 0, false
}

// businessKey is the effect's key per event type (examples/receivers/README.md's contract).
func businessKey(ev event) string {
	obj := ev.Data.Object
	id := str(obj, "id")
	switch ev.Type {
	case "checkout.session.completed":
		status := str(obj, "payment_status")
		if str(obj, "mode") == "subscription" {
			if status == "paid" || status == "no_payment_required" {
				return "provision:" + id
			}
		} else if status == "paid" {
			return "fulfillment:" + id
		}
	case "checkout.session.async_payment_succeeded":
		return "fulfillment:" + id
	case "payment_intent.succeeded":
		// a Checkout Session's intent (its payment_intent_data.metadata) is fulfilled on the session's events
		if meta, ok := obj["metadata"].(map[string]any); ok && str(meta, "channel") == "checkout" {
			return ""
		}
		// an invoice's intent (a subscription's: its description, or before API 2025-03-31.basil
		// its invoice field) is the invoice's renewal, granted on its invoice.paid
		if desc := str(obj, "description"); str(obj, "invoice") != "" || desc == "Subscription creation" ||
			desc == "Subscription update" {
			return ""
		}
		return "license:" + id
	case "invoice.paid":
		return "renewal:" + id
	case "invoice.payment_failed":
		attempt, _ := num(obj, "attempt_count")
		return fmt.Sprintf("dunning:%s:%d", id, attempt)
	case "charge.refunded":
		refunded, _ := num(obj, "amount_refunded")
		return fmt.Sprintf("refund:%s:%d", id, refunded)
	}
	return ""
}

// amountOf is the minor units an effect moves: a refund's own amount (the change of
// amount_refunded); otherwise the object's first non-zero total, paid amount or amount.
func amountOf(ev event) *int64 {
	obj := ev.Data.Object
	if ev.Type == "charge.refunded" {
		now, ok := num(obj, "amount_refunded")
		before, had := num(ev.Data.PreviousAttributes, "amount_refunded")
		if !ok || !had {
			return nil
		}
		diff := now - before
		return &diff
	}
	for _, key := range []string{"amount_total", "amount_paid", "amount"} {
		if v, ok := num(obj, key); ok && v != 0 {
			return &v
		}
	}
	return nil
}

func effectOf(ev event) *Effect {
	key := businessKey(ev)
	if key == "" {
		return nil
	}
	return &Effect{BusinessKey: key, Amount: amountOf(ev)}
}

// stateOf is the subscription state a customer.subscription.* event carries, or nil.
func stateOf(ev event) *State {
	if !strings.HasPrefix(ev.Type, "customer.subscription.") {
		return nil
	}
	obj := ev.Data.Object
	version, _ := num(obj, "hookproof_version")
	return &State{ObjectID: str(obj, "id"), Status: str(obj, "status"), Version: version}
}
