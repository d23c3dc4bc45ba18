package main

import "sync"

// Store keeps the effects, the subscription states and the processed event ids in
// memory, behind one mutex: Apply's critical section is the effect's transaction.
type Store struct {
	mu        sync.Mutex
	processed map[string]struct{}
	effects   []Effect
	states    map[string]State
	order     []string
}

func NewStore() *Store {
	return &Store{processed: map[string]struct{}{}, states: map[string]State{}}
}

// Apply claims eventID and applies the effect and the state in one critical section;
// false when the claim failed (a duplicate: nothing applied). A state older than or as
// old as the stored one is ignored (events arrive out of order).
func (s *Store) Apply(eventID string, effect *Effect, state *State) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.claim(eventID) {
		return false
	}
	if effect != nil {
		s.effects = append(s.effects, *effect)
	}
	if state != nil {
		old, known := s.states[state.ObjectID]
		if !known {
			s.order = append(s.order, state.ObjectID)
		}
		if !known || state.Version > old.Version {
			s.states[state.ObjectID] = *state
		}
	}
	return true
}

// Observe is what GET /hookproof/observe answers: {"effects": [...], "states": [...]}.
func (s *Store) Observe() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	effects := append([]Effect{}, s.effects...)
	states := make([]State, 0, len(s.order))
	for _, id := range s.order {
		states = append(states, s.states[id])
	}
	return map[string]any{"effects": effects, "states": states}
}
