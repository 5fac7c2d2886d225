// Secrets in configuration text: the values a start-up error must not print (a Kafka
// sasl.password would end up in the journal). ConfigError's message and rendering go through
// maskSecrets.
#pragma once

#include <string>
#include <string_view>

namespace rowprobe {

/// True for a property whose value is a secret (a password, a client secret, a private key):
/// its name contains "password" or "secret", or is ssl.key.pem / sasl.oauthbearer.config.
bool isSecretProperty(std::string_view name) noexcept;

/// `text` with the value of every `name=value` whose name is a secret (isSecretProperty)
/// replaced by as many '*' (positions stay, so a caret still points at the right place). Names
/// start after ';', ',', '"', a blank or the start; values end at ';', ',', '"', a newline or
/// the end.
std::string maskSecrets(std::string text);

}  // namespace rowprobe
