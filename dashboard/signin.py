"""Signing in: a generated password (``manage.py ensureadmin``) must be changed at the first sign-in.

Throttling of wrong passwords is django-axes' (settings: AXES_*); the strength of new passwords is Django's
password validators' (AUTH_PASSWORD_VALIDATORS)."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordChangeForm
from django.shortcuts import redirect
from django.urls import reverse_lazy

from .models import GeneratedPassword

CHANGE_REQUIRED = "schedscope_password_change_required"
# what a session with a generated password may still reach (the change itself, signing in and out)
ALLOWED_URLS = frozenset({"profiles:password_change", "profiles:login", "profiles:logout"})


def remember_generated(user) -> None:
    """Mark ``user``'s current password as generated: it must be changed at the first sign-in."""
    GeneratedPassword.objects.update_or_create(user=user, defaults={"password": user.password})


def flag_generated_password(sender, request, user, **kwargs) -> None:
    """``user_logged_in`` receiver: a sign-in with a still-generated password must change it first."""
    if request is not None and GeneratedPassword.objects.filter(user=user, password=user.password).exists():
        request.session[CHANGE_REQUIRED] = True


class PasswordChangeRequiredMiddleware:
    """Every request of a session signed in with a generated password is sent to the password change."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not request.COOKIES or not request.session.get(CHANGE_REQUIRED):
            return None
        match = request.resolver_match
        if match is not None and match.view_name in ALLOWED_URLS:
            return None
        return redirect("profiles:password_change")


class NewPasswordForm(PasswordChangeForm):
    """Django's password change, refusing the old password as the new one."""

    def clean_new_password1(self):
        new = self.cleaned_data.get("new_password1")
        if new and self.user.check_password(new):
            raise forms.ValidationError("Choose a password other than the current one.", code="password_unchanged")
        return new


class PasswordChangeView(auth_views.PasswordChangeView):
    form_class = NewPasswordForm
    template_name = "profiles/password_change.html"
    success_url = reverse_lazy("index")

    def form_valid(self, form):
        response = super().form_valid(form)
        GeneratedPassword.objects.filter(user=form.user).delete()
        self.request.session.pop(CHANGE_REQUIRED, None)
        messages.success(self.request, "Your password was changed.")
        return response
