"""inbox_sync: shipped with hookproof (the demo runs it) as `hookproof.receivers.inbox_sync`; see its docstring."""

from hookproof.receivers.inbox_sync import InboxSync, app_from_env, create_app, main

__all__ = ["InboxSync", "app_from_env", "create_app", "main"]

if __name__ == "__main__":
    main()
