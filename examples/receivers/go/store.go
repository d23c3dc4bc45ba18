//go:build !nodedupe

package main

// receiverName is what /healthz names.
const receiverName = "stripe_receiver"

// claim records the event id as processed; false when it was already (a duplicate).
// Called with the store's lock held: the claim is part of the effect's transaction.
func (s *Store) claim(eventID string) bool {
	if _, seen := s.processed[eventID]; seen {
		return false
	}
	s.processed[eventID] = struct{}{}
	return true
}
