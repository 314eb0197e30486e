# PKCE (RFC 7636, S256) for LemonLDAP::NG 2.16's "OpenID Connect" authentication backend, which
# sends none by itself. Loading and configuring it: README.md beside this folder.
#
# The code verifier is HMAC-SHA256(key, "<op>\0<state>") in base64url (43 characters): the
# authorization request carries its S256 challenge, the token request recomputes it from the
# `state` that came back on the callback. Nothing is stored between the two requests, and only
# the holder of the key can compute a verifier, so a stolen code and state are not enough.
package SvcConnect::LLNG::Pkce;

use strict;
use Mouse;
use Digest::SHA qw(hmac_sha256 sha256);
use MIME::Base64 qw(encode_base64url);
use Lemonldap::NG::Portal::Main::Constants qw(PE_OK PE_ERROR);

our $VERSION = '1.0.0';

extends 'Lemonldap::NG::Portal::Main::Plugin';

use constant hook => {
    oidcGenerateAuthenticationRequest => 'addChallenge',
    oidcGenerateTokenRequest          => 'addVerifier',
};

has key => ( is => 'rw' );

sub init {
    my ($self) = @_;
    my $key = ( $self->conf->{customPluginsParams} || {} )->{svcConnectPkceKey};
    unless ( defined $key and length($key) >= 32 ) {
        $self->logger->error(
            'SvcConnect::LLNG::Pkce: customPluginsParams/svcConnectPkceKey must hold at least 32 characters');
        return 0;
    }
    $self->key($key);
    return 1;
}

sub verifier {
    my ( $self, $op, $state ) = @_;
    return encode_base64url( hmac_sha256( "$op\0$state", $self->key ) );
}

sub addChallenge {
    my ( $self, $req, $op, $params ) = @_;
    my $state = $params->{state};
    unless ( defined $state and length $state ) {
        $self->logger->error("SvcConnect::LLNG::Pkce: no state in the authorization request for $op");
        return PE_ERROR;
    }
    $params->{code_challenge}        = encode_base64url( sha256( $self->verifier( $op, $state ) ) );
    $params->{code_challenge_method} = 'S256';
    return PE_OK;
}

sub addVerifier {
    my ( $self, $req, $op, $params ) = @_;
    return PE_OK unless ( $params->{grant_type} // '' ) eq 'authorization_code';
    my $state = $req->param('state');
    unless ( defined $state and length $state ) {
        $self->logger->error("SvcConnect::LLNG::Pkce: no state on the callback from $op");
        return PE_ERROR;
    }
    $params->{code_verifier} = $self->verifier( $op, $state );
    return PE_OK;
}

1;
