// Command stripereceiver is a Stripe webhook receiver written with Go's standard library
// only (net/http, crypto/hmac, encoding/json): the reference receiver hookproof certifies
// for teams whose receivers are in Go.
//
// It follows Stripe's "Check the webhook signatures" guide by hand, as stripe-go's
// webhook.ConstructEvent does: the Stripe-Signature header's t= timestamp and v1=
// signatures, HMAC-SHA256 over "<t>.<raw body>" with the endpoint secret, compared in
// constant time (hmac.Equal) against every v1 (a secret roll sends two), and a timestamp
// older than 300 s refused (the SDK's default tolerance; like the SDK, a future one is
// not). A test-mode endpoint refuses live events and the reverse, and another account's
// events (WEBHOOK_ACCOUNT), with 400.
//
// Effects (the business keys of examples/receivers/README.md) and subscription states
// live in memory; the store's one mutex is the effect's transaction: the event id is
// claimed, the effect applied and the state written under it, so a duplicate, even a
// concurrent one, finds its id claimed and is acknowledged with no effect (store.go).
// GET /hookproof/observe serves them as hookproof's http observer reads them.
//
// Environment: PORT (default 8000), WEBHOOK_SECRET (several separated by spaces; default
// HOOKPROOF_SECRET), WEBHOOK_LIVE (1/true for a live endpoint), WEBHOOK_ACCOUNT.
// It prints one readiness line, "listening on http://127.0.0.1:PORT/webhooks".
package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// tolerance is stripe-go's webhook.DefaultTolerance: how old a signed timestamp may be.
const tolerance = 300 * time.Second

// maxBody bounds what one delivery may send (hookproof's oversized-payload sends 3 MB).
const maxBody = 8 << 20

type config struct {
	secrets []string
	live    bool
	account string
}

// event is the part of Stripe's Event object the receiver reads.
type event struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Livemode bool   `json:"livemode"`
	Account  string `json:"account"`
	Data     struct {
		Object             map[string]any `json:"object"`
		PreviousAttributes map[string]any `json:"previous_attributes"`
	} `json:"data"`
}

var errSignature = errors.New("no signature matches")

// verify checks the Stripe-Signature header against the raw body, as Stripe documents it.
func verify(body []byte, header string, secrets []string, now time.Time) error {
	var timestamp string
	var signatures [][]byte
	for _, part := range strings.Split(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch key {
		case "t":
			timestamp = value
		case "v1":
			if sig, err := hex.DecodeString(value); err == nil {
				signatures = append(signatures, sig)
			}
		}
	}
	if timestamp == "" || len(signatures) == 0 {
		return errors.New("the Stripe-Signature header has no timestamp or no v1 signature")
	}
	t, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("the Stripe-Signature timestamp is not a number")
	}
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(timestamp))
		mac.Write([]byte("."))
		mac.Write(body)
		expected := mac.Sum(nil)
		for _, sig := range signatures {
			if hmac.Equal(expected, sig) {
				if now.Sub(time.Unix(t, 0)) > tolerance {
					return errors.New("the timestamp is outside the tolerance zone")
				}
				return nil
			}
		}
	}
	return errSignature
}

func reply(w http.ResponseWriter, status int, body map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func webhook(cfg config, store *Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			reply(w, http.StatusMethodNotAllowed, map[string]any{"error": "POST only"})
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			reply(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "body too large"})
			return
		}
		if err := verify(body, r.Header.Get("Stripe-Signature"), cfg.secrets, time.Now()); err != nil {
			reply(w, http.StatusBadRequest, map[string]any{"error": "signature verification failed: " + err.Error()})
			return
		}
		var ev event
		decoder := json.NewDecoder(bytes.NewReader(body))
		decoder.UseNumber() // amounts stay integers
		if err := decoder.Decode(&ev); err != nil || ev.ID == "" || ev.Data.Object == nil {
			reply(w, http.StatusBadRequest, map[string]any{"error": "not a Stripe event"})
			return
		}
		if ev.Livemode != cfg.live {
			reply(w, http.StatusBadRequest, map[string]any{"error": "event of the other mode"})
			return
		}
		if cfg.account != "" && ev.Account != "" && ev.Account != cfg.account {
			reply(w, http.StatusBadRequest, map[string]any{"error": "event of another account"})
			return
		}
		effect, state := effectOf(ev), stateOf(ev)
		if effect == nil && state == nil {
			reply(w, http.StatusOK, map[string]any{"ignored": ev.Type})
			return
		}
		if !store.Apply(ev.ID, effect, state) {
			reply(w, http.StatusOK, map[string]any{"duplicate": ev.ID})
			return
		}
		reply(w, http.StatusOK, map[string]any{"received": true})
	}
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8000"
	}
	secrets := strings.Fields(os.Getenv("WEBHOOK_SECRET"))
	if len(secrets) == 0 {
		secrets = strings.Fields(os.Getenv("HOOKPROOF_SECRET"))
	}
	if len(secrets) == 0 {
		fmt.Fprintln(os.Stderr, "stripereceiver: set WEBHOOK_SECRET (the endpoint's signing secret)")
		os.Exit(2)
	}
	live := strings.EqualFold(os.Getenv("WEBHOOK_LIVE"), "1") || strings.EqualFold(os.Getenv("WEBHOOK_LIVE"), "true")
	cfg := config{secrets: secrets, live: live, account: os.Getenv("WEBHOOK_ACCOUNT")}
	store := NewStore()
	mux := http.NewServeMux()
	mux.HandleFunc("/webhooks", webhook(cfg, store))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"ok": true, "receiver": receiverName})
	})
	mux.HandleFunc("/hookproof/observe", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(store.Observe())
	})
	listener, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stripereceiver:", err)
		os.Exit(2)
	}
	fmt.Printf("listening on http://127.0.0.1:%s/webhooks\n", port)
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second}
	log.Fatal(server.Serve(listener))
}
