"""`shopify_app` erasing the shop's orders on its ``app/uninstalled`` (a late order webhook of the
shop makes its order again): a correct receiver."""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(on_uninstall="erase")
