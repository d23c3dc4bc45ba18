from django.urls import include, path

urlpatterns = [path("stripe/", include("drf_stripe.urls"))]
