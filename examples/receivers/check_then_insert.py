"""check_then_insert: shipped with hookproof (the demo runs it) as `hookproof.receivers.check_then_insert`; see its docstring."""

from hookproof.receivers.check_then_insert import CheckThenInsert, app_from_env, create_app, main

__all__ = ["CheckThenInsert", "app_from_env", "create_app", "main"]

if __name__ == "__main__":
    main()
