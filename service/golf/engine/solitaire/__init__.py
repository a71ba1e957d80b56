"""Golf solitaire: rules, deals, states, moves, the player's view."""
