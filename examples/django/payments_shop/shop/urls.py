from django.urls import include, path

# Stripe is configured to send its events to /payments/process/stripe/ (the package's
# static callback for the "stripe" variant).
urlpatterns = [path("payments/", include("payments.urls"))]
