"""REST API of accounts: API tokens for API clients (``/api/auth/token/``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate, user_logged_in
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.infra.rest import ErrorSerializer
from wallet import protection


class TokenApi(APIView):
    """``POST``: exchange a username and password for the account's API token; ``DELETE``:
    revoke it.

    API clients then send ``Authorization: Token <key>``; HTTP Basic is not accepted. Failed
    attempts count towards django-axes' lockout of the (username, address) pair exactly as
    logins on the site and the admin do: after ``POKER_LOGIN_FAILURE_LIMIT`` failures the
    pair gets ``429 login_locked_out`` until the cool-off ends, even with the right password;
    so does every login from an address with ``POKER_LOGIN_ADDRESS_FAILURE_LIMIT`` failures
    (config/login_lockout.py). Issuing a token creates no session and sets no cookie.
    """

    class Input(serializers.Serializer[Any]):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=4096, trim_whitespace=False)

    class Output(serializers.Serializer[Any]):
        token = serializers.CharField()

    @extend_schema(
        request=Input,
        responses={200: Output, 400: ErrorSerializer, 401: ErrorSerializer, 403: ErrorSerializer, 429: ErrorSerializer},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        # The underlying HttpRequest: django-axes records the failure and marks a lockout on
        # it, and its middleware turns that mark into the 429 reply.
        user = authenticate(
            request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if user is None or not user.is_active:
            return Response(
                {"code": "invalid_credentials", "message": gettext("Wrong username or password."), "extra": {}},
                status=status.HTTP_401_UNAUTHORIZED,
            )
        if protection.is_suspended(user_id=user.pk):
            return Response(
                {"code": "suspended", "message": gettext("This account is suspended."), "extra": {}},
                status=status.HTTP_403_FORBIDDEN,
            )
        # A token is a login: the signal records it (last_login) and resets axes' failures.
        user_logged_in.send(sender=type(user), request=request._request, user=user)
        token, _ = Token.objects.get_or_create(user=user)
        return Response(self.Output({"token": token.key}).data)

    @extend_schema(request=None, responses={204: None, 401: ErrorSerializer})
    def delete(self, request: Request) -> Response:
        """Revoke the caller's token (a new one is issued at the next ``POST``)."""
        user_id = request.user.pk
        assert user_id is not None  # IsAuthenticated
        Token.objects.filter(user_id=user_id).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)

    def get_authenticators(self) -> list[BaseAuthentication]:
        # POST proves who you are by the password alone; DELETE by the token (or session).
        if self.request is not None and self.request.method == "POST":
            return []
        return super().get_authenticators()

    def get_permissions(self) -> list[BasePermission]:
        if self.request is not None and self.request.method == "POST":
            return [AllowAny()]
        return [IsAuthenticated()]
