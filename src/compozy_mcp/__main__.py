from compozy_mcp.cli.main import console

console()
