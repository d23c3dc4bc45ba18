"""shopify_app_uninstall_erase: `shopify_app` erasing a shop's stored orders on ``app/uninstalled``.

The shop is the one ``X-Shopify-Shop-Domain`` names, as an app keys its shops (its sessions are
per shop domain; ``shopify.webhooks.validate`` in ``@shopify/shopify-api`` returns the domain).
Dedupe, effects and states are `shopify_app`'s: a correct receiver, so long as one domain
names one shop.
"""

from __future__ import annotations

from examples.receivers.shopify_app import main

if __name__ == "__main__":
    main(erase_on_uninstall=True)
