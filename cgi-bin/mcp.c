/*
 * mcp: /mcp, MCP's Streamable HTTP transport for both protocol eras. The
 * logic is in lib/mcp/transport.c; lib/mcp/mcp.h describes the eras.
 */
#include "app/app.h"
#include "mcp/mcp.h"

int
main(void)
{
	return app_main_net("mcp", mcp_transport);
}
