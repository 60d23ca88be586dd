# The exporter's image, from the same package as the plugin (deploy/kubectl-terminating.yaml):
#   docker build -t REGISTRY/kubectl-terminating:v0.1.0 .
# With the MCP server for in-cluster agents (docs/integrations.md, kagent):
#   docker build --build-arg EXTRAS=[mcp] -t REGISTRY/kubectl-terminating-mcp:v0.1.0 .
FROM python:3.12-slim
ARG EXTRAS=""
COPY pyproject.toml README.md LICENSE /src/
COPY kubectl_terminating /src/kubectl_terminating
RUN pip install --no-cache-dir "/src${EXTRAS}" && rm -rf /src
USER 65534:65534
EXPOSE 9101
ENTRYPOINT ["kubectl-terminating"]
CMD ["serve", "--metrics-bind-address=:9101"]
